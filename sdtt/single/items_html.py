"""What a judge sees of one single-item response, as an HTML fragment for survey exports:
the cue and its association, or the image and its caption.

Every text is escaped by the one rule of :func:`sdtt.templates.escape_html` (braces
included, which survey tools read as placeholders). Images are embedded as ``data:`` URIs,
so the export is one self-contained file, or linked under ``image_base`` (a URL or a
relative folder the researcher uploads the images to). Nothing here names the truth or
the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from sdtt.errors import InputError
from sdtt.models.base import Image
from sdtt.single.response import SingleResponse
from sdtt.templates import escape_html


def association_html(cue: str, association: str) -> str:
    """The cue and the association word, for a word-association item."""
    return (
        '<div class="sdtt-wordassoc">'
        f'<p>Cue word: <strong class="sdtt-cue">{escape_html(cue)}</strong></p>'
        f'<p>Associated word: <strong class="sdtt-response">{escape_html(association)}'
        "</strong></p></div>"
    )


def image_src(image_name: str, images: Mapping[str, Image] | None, image_base: str | None) -> str:
    """The ``src`` of an image: a data URI from ``images``, or a link under ``image_base``."""
    if image_base is not None:
        return f"{image_base.rstrip('/')}/{quote(image_name)}"
    image = (images or {}).get(image_name)
    if image is None:
        raise InputError(
            f"no image {image_name!r} to embed.",
            hint="Give the image folder the captions were written for, or link the images.",
        )
    return image.data_uri()


def caption_html(src: str, caption: str) -> str:
    """The image and its caption, for an image-captioning item."""
    return (
        '<figure class="sdtt-caption">'
        f'<img src="{escape_html(src)}" alt="The image" style="max-width:100%">'
        f'<figcaption class="sdtt-response">{escape_html(caption)}</figcaption></figure>'
    )


def response_html(
    record: SingleResponse,
    *,
    images: Mapping[str, Image] | None = None,
    image_base: str | None = None,
) -> str:
    """The HTML a judge sees for ``record`` (see the module's docstring)."""
    if record.task == "wordassoc":
        return association_html(record.stimulus, record.response)
    return caption_html(image_src(record.stimulus, images, image_base), record.response)
