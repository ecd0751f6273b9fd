"""Questionnaires for human judges: pairing, building, exporting, importing answers.

The flow (``questionnaires/README.md`` at the repository root has the user's view):

1. :mod:`~sdtt.questionnaires.pairing` matches bot conversations with human-human ones
   on the same topic and cuts both to their last X turns;
2. :mod:`~sdtt.questionnaires.build` turns a :class:`~sdtt.tasks.study.StudySpec`
   and the pairs into a judge-facing :class:`~sdtt.tasks.questionnaire.Questionnaire`
   and a separate :class:`~sdtt.tasks.questionnaire.AnswerKey`;
3. :mod:`~sdtt.questionnaires.exports` writes it for the survey tools of
   :mod:`sdtt.surveys` (SurveyJS, Qualtrics, jsPsych, LimeSurvey, print and CSV; one
   module each, all through the shared :mod:`~sdtt.tasks.layout`);
4. :mod:`~sdtt.questionnaires.answers` reads each tool's answers back (with its
   module's reader) into :class:`~sdtt.tasks.judgements.Judgement` records.

What judges are given and answer (the questionnaire, its study settings, the answer
records) lives in :mod:`sdtt.tasks`, beside the rating and single-item tasks.
"""
