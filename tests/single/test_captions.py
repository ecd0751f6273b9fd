"""Image captioning: images from a folder, machine captions from a vision-capable model
(mock offline; OpenAI's request body on the local fake), human captions from CSV, and
the HTML a judge sees, escaped."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from sdtt.errors import ConfigError, InputError
from sdtt.models import get_model
from sdtt.single.captions import (
    INSTRUCTIONS,
    load_images,
    machine_captions,
    read_human_captions,
    tidy_caption,
)
from sdtt.single.catch import response_catch_items
from sdtt.single.items_html import response_html
from sdtt.single.response import SingleResponse
from tests.fakes.openai_fake import FakeOpenAIServer

PNG = b"\x89PNG\r\n\x1a\n"
JPEG = b"\xff\xd8\xff\xe0"


def image_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "0002.png").write_bytes(PNG + b"second")
    (folder / "0001.jpg").write_bytes(JPEG + b"first")
    (folder / "notes.txt").write_text("not an image")
    return folder


def test_images_are_read_sorted_with_their_media_types(tmp_path: Path) -> None:
    images = load_images(image_folder(tmp_path))
    assert [(i.name, i.media_type) for i in images] == [
        ("0001.jpg", "image/jpeg"),
        ("0002.png", "image/png"),
    ]


def test_a_file_that_is_not_the_image_it_claims_is_named(tmp_path: Path) -> None:
    folder = image_folder(tmp_path)
    (folder / "0003.png").write_bytes(JPEG + b"jpeg in disguise")
    with pytest.raises(InputError, match=r"0003\.png: the file is not a image/png image"):
        load_images(folder)


def test_an_empty_or_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such folder"):
        load_images(tmp_path / "nowhere")
    with pytest.raises(InputError, match="holds no images"):
        load_images(tmp_path)


@pytest.mark.trio
async def test_machine_captions_one_per_image_from_a_mock_model(tmp_path: Path) -> None:
    images = load_images(image_folder(tmp_path))
    async with get_model("mock/short") as model:
        found = await machine_captions(model, images, seed=2)
        again = await machine_captions(model, images, seed=2)
        prompts = model.api.prompts  # type: ignore[attr-defined]
    assert [r.stimulus for r in found] == ["0001.jpg", "0002.png"]
    assert [r.response for r in found] == [r.response for r in again]
    assert all(len(r.response.split()) >= 6 for r in found)
    assert {r.truth for r in found} == {"machine"}
    assert {p.images[0].name for p in prompts} == {"0001.jpg", "0002.png"}
    assert prompts[0].instructions == INSTRUCTIONS


@pytest.mark.trio
async def test_a_model_without_image_input_is_refused_before_any_call(tmp_path: Path) -> None:
    images = load_images(image_folder(tmp_path))
    async with get_model("eliza/classic") as model:
        with pytest.raises(ConfigError, match="cannot be shown images"):
            await machine_captions(model, images)
        assert model.calls == 0


@pytest.mark.trio
async def test_openai_receives_each_image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    images = load_images(image_folder(tmp_path))
    with FakeOpenAIServer(reply='"A cat sleeps on a warm windowsill in the sun."') as server:
        async with get_model("openai/gpt-test", base_url=server.base_url) as model:
            found = await machine_captions(model, images)
        sent = set()
        for request in server.requests:
            part = request.json()["messages"][-1]["content"][0]
            sent.add(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
    assert sent == {image.data for image in images}
    assert found[0].response == "A cat sleeps on a warm windowsill in the sun."


def test_tidy_caption_drops_quotes_and_blank_lines() -> None:
    assert tidy_caption('\n "Two dogs run\n across a field."  \n') == "Two dogs run across a field."


def test_human_captions_from_csv(tmp_path: Path) -> None:
    path = tmp_path / "captions.csv"
    path.write_text(
        "image,caption,participant\n0001.jpg,A man rides a horse on the beach,w1\n"
        "images/0002.png,Plates of food sit on a long table,w2\n",
        encoding="utf-8",
    )
    found = read_human_captions(path, images=["0001.jpg", "0002.png"])
    assert [(r.stimulus, r.agent, r.truth) for r in found] == [
        ("0001.jpg", "w1", "human"),
        ("0002.png", "w2", "human"),
    ]
    path.write_text("image,caption\n0001.jpg,ok\n0009.jpg,A caption\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"captions\.csv:3 field 'image': '0009\.jpg' is not"):
        read_human_captions(path, images=["0001.jpg"])


def record(task: str, stimulus: str, text: str) -> SingleResponse:
    return SingleResponse(
        task=task,  # type: ignore[arg-type]
        id="r1",
        stimulus=stimulus,
        response=text,
        truth="machine",
        agent="openai/gpt-secret",
        origin="model",
    )


def test_caption_items_embed_the_image_and_escape_the_caption(tmp_path: Path) -> None:
    images = {i.name: i for i in load_images(image_folder(tmp_path))}
    evil = 'A <script>alert(1)</script> & "{{x}}" sign'
    html = response_html(record("caption", "0001.jpg", evil), images=images)
    assert "<script>" not in html and "{{" not in html
    assert "&lt;script&gt;" in html and "&#123;&#123;x&#125;&#125;" in html
    assert f'src="data:image/jpeg;base64,{base64.b64encode(JPEG + b"first").decode()}"' in html
    assert "gpt-secret" not in html and "machine" not in html
    linked = response_html(record("caption", "my image.jpg", "ok"), image_base="https://x.org/i/")
    assert 'src="https://x.org/i/my%20image.jpg"' in linked
    with pytest.raises(InputError, match=r"no image 'gone\.jpg' to embed"):
        response_html(record("caption", "gone.jpg", "ok"), images=images)


def test_association_items_show_cue_and_word_escaped() -> None:
    html = response_html(record("wordassoc", "bread", "<b>butter</b>"))
    assert "bread" in html and "&lt;b&gt;butter&lt;/b&gt;" in html
    assert "gpt-secret" not in html


def test_caption_catch_items_repeat_one_word_four_times() -> None:
    items = response_catch_items("caption", ["0001.jpg", "0002.jpg", "0003.jpg"], 3, seed=2)
    for item in items:
        words = item.response.split()
        assert len(words) == 4 and len(set(words)) == 1
        assert item.catch and item.truth == "machine"
    html = response_html(items[0], image_base="images")
    assert "catch" not in html
