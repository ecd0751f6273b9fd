"""Single-item Turing-like tests (Zhang, Kreiman et al.): a judge sees one item and says,
for each speaker, human or machine.

The core is generic: a :class:`~sdtt.single.items.SingleItem` is a stimulus (a chat's
lines, labelled parts such as a cue and its association, or an image and its caption)
with the truth of each judged speaker. :mod:`~sdtt.single.items` cuts conversations of
any class (HH, HM, MH, MM) into items, :mod:`~sdtt.single.catch` makes the attention
catch items, :func:`~sdtt.tasks.design.item_forms` hands out balanced forms,
:mod:`~sdtt.single.build` turns items into the task judges see and the key they never
see, :mod:`~sdtt.single.scoring` scores answers per class and per cut with the papers'
tests (:mod:`~sdtt.single.significance`), and
:mod:`~sdtt.single.machine_chats` makes machine-machine chats the papers' way.
"""
