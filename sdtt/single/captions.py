"""The image-captioning task: images from a folder, machine captions from a vision-capable
model (OpenAI or Anthropic image input), human captions imported from a CSV file.

The model gets the papers' instructions to people (their Methods; the ChatGPT agent got
the same text) and one image; its caption is kept as written, but for surrounding
quotes and blank lines. A model whose provider cannot take images is refused before any
image is read into a request (:func:`sdtt.models.registry.require_image_input`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from sdtt.errors import InputError
from sdtt.models.asking import all_at_once
from sdtt.models.base import GenerateConfig, Generator, Image, Prompt
from sdtt.models.registry import require_image_input
from sdtt.seeds import derive_seed
from sdtt.single.csvrows import csv_rows
from sdtt.single.response import SingleResponse, response_id

MEDIA_TYPES = {
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
"""The image files read from a folder (both providers take these four types)."""
MAGIC = {
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Anthropic's limit per image (OpenAI's is larger): bigger files are refused up front."""

INSTRUCTIONS = "\n".join(
    (
        "Describe all the important parts of the scene.",
        "The description should contain at least 6 words.",
        "Avoid making spelling errors in the description.",
        "Do not describe unimportant details.",
        "Do not use any special characters like !, #, $, etc.",
        "Do not start the sentence with 'There is' or 'There are'.",
        "Do not write your descriptions as 'An image containing ...', 'A photo of ...', etc.",
        "Do not describe things that might have happened in the future or past.",
        "Do not use proper names for people.",
        "Do not describe what a person in the image might say.",
    )
)
"""The papers' instructions to human captioners, which their ChatGPT agent got too."""
TASK = "Write your description of this image as one sentence, and nothing else."
CONFIG = GenerateConfig(max_tokens=80, temperature=1.0)


def load_images(folder: str | Path) -> list[Image]:
    """The images of ``folder`` (not its sub-folders), sorted by file name.

    A file whose bytes are not the image its extension says, or one larger than
    :data:`MAX_IMAGE_BYTES`, is an :class:`InputError` naming it.
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputError("no such folder.", path=root, hint="Give the folder holding the images.")
    images = []
    for path in sorted(root.iterdir(), key=lambda p: p.name):
        media_type = MEDIA_TYPES.get(path.suffix.lower())
        if media_type is None or not path.is_file():
            continue
        data = path.read_bytes()
        if not data.startswith(MAGIC[media_type]):
            raise InputError(
                f"the file is not a {media_type} image.",
                path=path,
                hint="Convert it, or give it the extension of its real type.",
            )
        if len(data) > MAX_IMAGE_BYTES:
            raise InputError(
                f"the image is {len(data) / 2**20:.1f} MB, more than models take "
                f"({MAX_IMAGE_BYTES // 2**20} MB).",
                path=path,
                hint="Scale it down (the papers used COCO-sized images, 640 pixels wide).",
            )
        images.append(Image(data, media_type, name=path.name))
    if not images:
        raise InputError(
            f"the folder holds no images ({', '.join(sorted(MEDIA_TYPES))}).", path=root
        )
    return images


def caption_prompt(image: Image) -> Prompt:
    """The prompt that asks for one caption of ``image``."""
    return Prompt(instructions=INSTRUCTIONS, task=TASK, images=(image,))


def tidy_caption(text: str) -> str:
    """The caption as written, less surrounding quotes, blank lines and spaces."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    caption = " ".join(lines)
    if len(caption) >= 2 and caption[0] == caption[-1] and caption[0] in "\"'":
        caption = caption[1:-1].strip()
    return caption


async def caption(
    model: Generator, image: Image, *, seed: int = 0, config: GenerateConfig = CONFIG
) -> SingleResponse:
    """One machine caption of ``image`` (an empty one is kept, excluded as 'empty')."""
    call = replace(config, seed=derive_seed(seed, "caption", image.name))
    raw = (await model.generate(caption_prompt(image), call)).text
    text = tidy_caption(raw)
    return SingleResponse(
        task="caption",
        id=response_id("caption", image.name, text, model.name, str(seed)),
        stimulus=image.name,
        response=text,
        truth="machine",
        agent=model.name,
        raw=raw if raw != text else None,
        exclusion_reason=None if text else "empty",
        origin="model",
        meta={"seed": seed},
    )


async def machine_captions(
    model: Generator, images: Sequence[Image], *, seed: int = 0
) -> list[SingleResponse]:
    """One caption per image, asked concurrently, in the order of ``images``.

    Refuses a model without image input before any call.
    """
    require_image_input(model.name)
    return await all_at_once([partial(caption, model, image, seed=seed) for image in images])


def read_human_captions(
    path: str | Path, images: Sequence[str] | None = None
) -> list[SingleResponse]:
    """Human captions from a CSV file with columns ``image`` (the file name) and
    ``caption`` (optional: ``participant``). With ``images`` (file names), a row naming
    another image is an :class:`InputError` naming its line."""
    known = set(images) if images is not None else None
    records = []
    for line, row in csv_rows(path, ("image", "caption"), ("participant",)):
        name = Path(row["image"]).name
        if known is not None and name not in known:
            raise InputError(
                f"{row['image']!r} is not one of the study's images.",
                path=path,
                line=line,
                field="image",
                hint="Name the image by its file name in the image folder.",
            )
        participant = row.get("participant", "")
        text = tidy_caption(row["caption"])
        records.append(
            SingleResponse(
                task="caption",
                id=response_id("caption", name, text, participant, f"{path}:{line}"),
                stimulus=name,
                response=text,
                truth="human",
                agent=participant,
                origin=f"{Path(path).name}:{line}",
            )
        )
    return records
