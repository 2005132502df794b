"""What ``ooda sandbox image`` puts in the image of a Node agent (as npm installs Gemini
CLI, Qwen Code and Codex): node at ``/usr/bin/node``, the agent's whole package (the
directory under the last ``node_modules``, a scoped one's ``@scope/name``) at the path it
has here, and nothing of the packages beside it. Building the image is tested with
Docker in ``tests/integration/cli/test_sandbox.py`` and, running the real CLIs, in
``tests/agents/test_real_gemini.py`` and ``test_real_qwen.py``."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest

from pytest_ooda.errors import SandboxError
from pytest_ooda.sandbox.image import image_files

if TYPE_CHECKING:
    from pathlib import Path


def _needs(program: str) -> None:
    if shutil.which(program) is None:
        pytest.fail(f"{program} is not installed (the image is made of what is here)")


def _package(root: Path, scoped: str, shebang: str = "#!/usr/bin/env node") -> Path:
    package = root / "lib" / "node_modules" / scoped
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": scoped}) + "\n")
    (package / "node_modules" / "dep").mkdir(parents=True)
    (package / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")
    script = package / "bin" / "agent.js"
    script.write_text(f"{shebang}\nrequire('dep')\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("scoped", ["@acme/agent", "agent"])
def test_a_node_agent_brings_node_and_its_whole_package(tmp_path: Path, scoped: str) -> None:
    _needs("node")
    _needs("busybox")
    script = _package(tmp_path, scoped)
    (tmp_path / "lib" / "node_modules" / "other").mkdir()
    (tmp_path / "lib" / "node_modules" / "other" / "secret.js").write_text("x\n")
    files, real = image_files(str(script))
    assert real == script.resolve()
    package = script.resolve().parents[1]
    inside = str(package).lstrip("/")
    assert files[f"{inside}/package.json"] == package / "package.json"
    assert files[f"{inside}/bin/agent.js"] == script.resolve()
    assert files[f"{inside}/node_modules/dep/index.js"].is_file()
    assert "usr/bin/node" in files
    assert not any("other/secret.js" in name for name in files)


def test_a_script_for_another_interpreter_is_refused_naming_it(tmp_path: Path) -> None:
    script = _package(tmp_path, "agent", shebang="#!/usr/bin/env -S python3 -u")
    with pytest.raises(SandboxError, match="is a script for python3, not a native"):
        image_files(str(script))
