"""What judges are given and what they answer, apart from any survey tool.

- :mod:`~sdtt.tasks.questionnaire`: the paired task (a :class:`Questionnaire` of pairs,
  one chat of each a bot's, and its separate :class:`AnswerKey`), under the study settings
  of :mod:`~sdtt.tasks.study`;
- :mod:`~sdtt.tasks.rating_task`: a rating task of ``sdtt align`` (settings in
  :mod:`~sdtt.tasks.rating_spec`);
- :mod:`~sdtt.tasks.single_task`: a single-item task of ``sdtt single``;
- :mod:`~sdtt.tasks.design`: balanced forms, which judge sees which items;
- :mod:`~sdtt.tasks.layout` and :mod:`~sdtt.tasks.reveal_turns`: how a chat is shown,
  whole or turn by turn;
- :mod:`~sdtt.tasks.judgements`: a judge's answer to a pair, as every scorer reads it.

Survey tools (:mod:`sdtt.surveys`) write these tasks and read their answers back;
:mod:`sdtt.questionnaires` builds paired tasks from transcripts.
"""
