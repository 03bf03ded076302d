"""Dockerfile.lambda, read statically (no Docker engine runs here): base image, platform, contents, handler."""

import importlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile.lambda"


def instructions():
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            pairs.append((word.upper(), " ".join(rest.split())))
    return pairs


def arguments(instruction):
    return [rest for word, rest in instructions() if word == instruction]


def test_builds_from_the_aws_lambda_python_image_for_arm64():
    (base,) = arguments("FROM")
    assert base == "--platform=linux/arm64 public.ecr.aws/lambda/python:3.12"


def test_copies_only_the_shared_schema_and_the_server():
    sources = [rest.split()[0] for rest in arguments("COPY") + arguments("ADD")]
    assert sources == ["shared/", "server/"]
    ignore = (ROOT / "Dockerfile.lambda.dockerignore").read_text(encoding="utf-8").split()
    assert ignore[ignore.index("*") :][:3] == ["*", "!shared/", "!server/"]


def test_installs_shared_and_server_into_the_task_root_never_the_indexer():
    (run,) = arguments("RUN")
    install = run.split("&&")[0]
    assert install.startswith("pip install")
    assert '--target "${LAMBDA_TASK_ROOT}"' in install
    assert install.split()[-2:] == ["/tmp/build/shared", "/tmp/build/server"]
    assert "indexer" not in DOCKERFILE.read_text(encoding="utf-8").replace("never the indexer", "")


def test_compiles_bytecode_at_build_time_and_writes_only_under_tmp_at_run_time():
    (run,) = arguments("RUN")
    assert 'python -m compileall -q -j 0 "${LAMBDA_TASK_ROOT}"' in run
    env = " ".join(arguments("ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    for folder in re.findall(r"(?:HOME|XDG_\w+)=(\S+)", env):
        assert folder.startswith("/tmp")


def test_the_handler_is_the_lambda_module_function():
    (cmd,) = arguments("CMD")
    (handler,) = json.loads(cmd)
    assert handler == "lancelot_server.lambda_handler.handler"
    module, _, name = handler.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))


def test_the_lambda_page_gives_the_build_command():
    page = (ROOT / "docs" / "lambda.md").read_text(encoding="utf-8")
    assert "docker buildx build --platform linux/arm64 --provenance=false -f Dockerfile.lambda" in page
