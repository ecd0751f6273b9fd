"""Questionnaires for human judges: pairing, building, exporting, importing answers.

The flow (``questionnaires/README.md`` at the repository root has the user's view):

1. :mod:`~sdtt.questionnaires.pairing` matches bot conversations with human-human ones
   on the same topic and cuts both to their last X turns;
2. :mod:`~sdtt.questionnaires.build` turns a :class:`~sdtt.questionnaires.study.StudySpec`
   and the pairs into a judge-facing :class:`~sdtt.questionnaires.questionnaire.Questionnaire`
   and a separate :class:`~sdtt.questionnaires.questionnaire.AnswerKey`;
3. :mod:`~sdtt.questionnaires.exports` writes it for the survey tools of
   :mod:`~sdtt.questionnaires.tools` (SurveyJS, Qualtrics, jsPsych, LimeSurvey, print
   and CSV; one :mod:`~sdtt.questionnaires.exporters` module each, all through the
   shared :mod:`~sdtt.questionnaires.layout`);
4. :mod:`~sdtt.questionnaires.answers` reads each tool's answers back (with its
   :mod:`~sdtt.questionnaires.readers` module) into
   :class:`~sdtt.questionnaires.judgements.Judgement` records.
"""
