"""The examples: the contracts application serves, and its walkthrough tells the whole story.

``examples/walkthrough.py`` serves ``examples/contracts.py`` with uvicorn on a free port and
drives it over real HTTP: an upload, a message that starts the scripted assistant's run, its
proposal accepted by someone else, a check-out (a second one refused as busy), a check-in of
the person's edit, and a download of the final revision with both edits in it.
"""

import zipfile
from pathlib import Path

from pydantic_ai.messages import ModelRequest, TextPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo

from examples.contracts import NOTE, assistant
from examples.walkthrough import serve_and_walk


async def test_the_walkthrough_uploads_asks_accepts_checks_out_and_in_and_downloads(
    tmp_path: Path,
) -> None:
    told: list[str] = []
    final = await serve_and_walk(tmp_path, say=told.append)
    story = "\n".join(told)
    assert told[1].startswith("app: FakeApp (fake), in process")
    assert "1. Alice uploads contract.docx: 201, art_" in story
    assert "its run completed, with proposal prp_" in story
    assert "Bob accepts it: v2" in story
    assert "Bob's check-out is refused (409)" in story
    assert "4. Alice checks it in: applied, v3" in story
    with zipfile.ZipFile(final) as package:
        body = package.read("word/document.xml").decode()
    assert NOTE in body
    assert "Approved by Alice." in body


def test_the_scripted_assistant_asks_which_file_when_none_is_named() -> None:
    info = AgentInfo(
        function_tools=[],
        allow_text_output=True,
        output_tools=[],
        model_settings=None,
        model_request_parameters=ModelRequestParameters(),
        instructions=None,
    )
    answer = assistant([ModelRequest(parts=[UserPromptPart("Tidy it up.")])], info)
    assert isinstance(answer.parts[0], TextPart)
    assert "Which file?" in answer.parts[0].content
