"""Survey tools: each tool's exports of every kind of task and the readers of its answers.

One module per tool (:mod:`~sdtt.surveys.surveyjs`, :mod:`~sdtt.surveys.qualtrics`,
:mod:`~sdtt.surveys.jspsych`, :mod:`~sdtt.surveys.limesurvey`,
:mod:`~sdtt.surveys.printable`, :mod:`~sdtt.surveys.long_csv`) holds everything of that
tool: the questionnaire's file, reveal mode, rating and single-item tasks, the answer
readers, its structural check, and its :class:`~sdtt.surveys.tool.SurveyTool` records.
:data:`sdtt.surveys.tools.TOOLS` lists them; :mod:`~sdtt.surveys.answer_files` holds what
the readers share. Exporters see only the task (:mod:`sdtt.tasks`), never its answer key,
so nothing secret can end up in what judges receive.
"""
