"""The cheap clues that let the scrubber skip a detector never skip a value it finds."""

from __future__ import annotations

import pytest

from sdtt.personas.scrub import Scrubber


@pytest.mark.parametrize(
    "text", ["router ab:cd:ef:ab:cd:ef here", "AB-CD-EF-AB-CD-EF", "abcd.efab.cdef"]
)
def test_a_mac_address_without_digits_is_still_replaced(text: str) -> None:
    scrubbed = Scrubber().scrub(text)
    assert "[MAC_1]" in scrubbed, scrubbed
