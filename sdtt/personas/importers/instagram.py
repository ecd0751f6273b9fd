"""Instagram conversations ("Download your information", format JSON).

Instagram writes the same ``message_N.json`` files as Facebook Messenger (same keys, same
Latin-1 mojibake, newest first), so :mod:`sdtt.personas.importers.messenger` reads them;
this module only gives the format its own name on the command line.
"""

from __future__ import annotations

from sdtt.personas.importers.messenger import MessengerImporter


class InstagramImporter(MessengerImporter):
    """``sdtt persona import instagram message_1.json --me NAME`` (or the folder)."""

    name = "instagram"
    help = "an Instagram conversation (message_N.json, or its folder)"
    file_help = (
        "A message_N.json file of your_instagram_activity/messages/inbox/<chat>/, or that folder."
    )


IMPORTER = InstagramImporter()
