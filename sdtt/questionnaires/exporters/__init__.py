"""One exporter module per survey tool; each turns a :class:`Questionnaire` into one file.

Exporters read only the questionnaire (never the answer key), so nothing secret can end
up in what judges receive. :data:`sdtt.questionnaires.tools.TOOLS` names them, and
:mod:`sdtt.questionnaires.exports` writes their files.
"""
