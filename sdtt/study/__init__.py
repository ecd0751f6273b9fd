"""A whole offline study from one spec file (``sdtt study``).

The spec (:mod:`sdtt.study.spec`) names the design; :mod:`sdtt.study.steps` turns it into
steps with the files they write; :mod:`sdtt.study.runner` makes what is missing, in
order, calling the library functions the single commands call, with every paid call
written to the cost ledger (:mod:`sdtt.study.ledger`) first. :mod:`sdtt.study.status`
shows the design grid; :mod:`sdtt.study.bundle`, :mod:`sdtt.study.verify` and
:mod:`sdtt.study.prereg` make the study checkable by others.
"""
