"""The Textual terminal UI: live chat with a persona bot and an in-lab judging screen.

The chat app hosts the trio burst engine inside Textual's asyncio loop with trio's guest
mode (:mod:`sdtt.ui.guest`); the UI is one more event sink, and the engine never imports
Textual.
"""
