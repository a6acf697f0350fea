"""Write .github/workflows/proveai.yml from the embedded template."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from proveai.errors import ProveAIError, ProveAIExit
from proveai.version import DISTRIBUTION, package_version

WORKFLOW_PATH = Path(".github") / "workflows" / "proveai.yml"

# provider -> (the secret to add, env lines the verify step gets)
PROVIDERS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "openrouter": (
        "OPENROUTER_API_KEY",
        (
            ("OPENROUTER_API_KEY", "${{ secrets.OPENROUTER_API_KEY }}"),
            ("PROVEAI_PROVIDER_BASE_URL", "https://openrouter.ai/api/v1"),
            ("PROVEAI_PROVIDER_PATTERN", '"*"'),
        ),
    ),
    "anthropic": ("ANTHROPIC_API_KEY", (("ANTHROPIC_API_KEY", "${{ secrets.ANTHROPIC_API_KEY }}"),)),
    "openai": ("OPENAI_API_KEY", (("OPENAI_API_KEY", "${{ secrets.OPENAI_API_KEY }}"),)),
    "azure-openai": (
        "AZURE_OPENAI_API_KEY",
        (
            ("AZURE_OPENAI_API_KEY", "${{ secrets.AZURE_OPENAI_API_KEY }}"),
            ("PROVEAI_PROVIDER_API_KEY", "${{ secrets.AZURE_OPENAI_API_KEY }}"),
            ("PROVEAI_PROVIDER_BASE_URL", "${{ vars.AZURE_OPENAI_ENDPOINT }}"),
            ("PROVEAI_PROVIDER_PATTERN", '"*"'),
        ),
    ),
    "bedrock": (
        "AWS_SECRET_ACCESS_KEY",
        (
            ("AWS_ACCESS_KEY_ID", "${{ secrets.AWS_ACCESS_KEY_ID }}"),
            ("AWS_SECRET_ACCESS_KEY", "${{ secrets.AWS_SECRET_ACCESS_KEY }}"),
            ("AWS_REGION", "${{ vars.AWS_REGION }}"),
        ),
    ),
    "custom": (
        "PROVEAI_PROVIDER_API_KEY",
        (
            ("PROVEAI_PROVIDER_API_KEY", "${{ secrets.PROVEAI_PROVIDER_API_KEY }}"),
            ("PROVEAI_PROVIDER_BASE_URL", "${{ vars.PROVEAI_PROVIDER_BASE_URL }}"),
            ("PROVEAI_PROVIDER_PATTERN", "${{ vars.PROVEAI_PROVIDER_PATTERN }}"),
        ),
    ),
}
DEFAULT_PROVIDER = "openrouter"

# The judge runs in proveai, so its model must be one the workflow's provider serves (the
# built-in default, claude-haiku-4-5, is an Anthropic name): the repository variable
# PROVEAI_JUDGE_MODEL wins, else this per-provider name. Bedrock has no client in proveai:
# there the variable must name a model reachable through PROVEAI_PROVIDER_* or Anthropic.
JUDGE_MODELS: dict[str, str | None] = {
    "openrouter": "anthropic/claude-haiku-4.5",
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "azure-openai": "gpt-4o-mini",
    "bedrock": None,
    "custom": None,
}


def judge_env_line(provider: str) -> tuple[str, str]:
    default = JUDGE_MODELS[provider]
    fallback = f" || '{default}'" if default else ""
    return ("PROVEAI_JUDGE_MODEL", f'"${{{{ vars.PROVEAI_JUDGE_MODEL{fallback} }}}}"')


@dataclass(frozen=True)
class SdkRequirement:
    """What the workflow installs to get this SDK, and why CI may not manage it."""

    requirement: str
    # set when the SDK came from somewhere CI cannot reach (a local folder or file)
    warning: str | None = None


def requirement_from_direct_url(direct_url: str | None, version: str) -> SdkRequirement:
    """The pin of the installed SDK, by how it was installed (PEP 610's direct_url.json).

    From a package index (no direct_url.json) the version is pinned. From a VCS or an archive
    URL the workflow installs that URL (a VCS one at its exact commit), which the index may not
    have. From a local folder or file (an editable checkout, a wheel on disk), CI has no copy:
    the version is pinned and a warning says so, rather than writing a path of this machine.
    """
    exact = f"{DISTRIBUTION}=={version}"
    if not direct_url:
        return SdkRequirement(exact)
    try:
        info = json.loads(direct_url)
    except ValueError:
        info = None
    url = info.get("url") if isinstance(info, dict) else None
    if not isinstance(info, dict) or not isinstance(url, str) or url.startswith("file:"):
        return SdkRequirement(
            exact,
            warning=(
                f"{DISTRIBUTION} {version} is installed from a local folder or file, so the workflow "
                f"installs {exact} from the package index, which has it only if that version is "
                "published there"
            ),
        )
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str) and isinstance(vcs.get("commit_id"), str):
        return SdkRequirement(f"{DISTRIBUTION} @ {vcs['vcs']}+{url}@{vcs['commit_id']}")
    return SdkRequirement(f"{DISTRIBUTION} @ {url}")


def sdk_requirement() -> SdkRequirement:
    """How the running SDK was installed, as a requirement CI can install."""
    # importlib.metadata: ~20 ms, paid only by `ci init`
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        direct_url = distribution(DISTRIBUTION).read_text("direct_url.json")
    except PackageNotFoundError:
        direct_url = "{}"  # a source tree never installed: nothing CI could install either
    return requirement_from_direct_url(direct_url, package_version())


@dataclass(frozen=True)
class ScaffoldResult:
    path: Path
    secret: str
    provider: str
    extra_secrets: tuple[str, ...]
    sdk: SdkRequirement


def render_workflow(provider: str, *, full: bool, python_version: str, sdk: SdkRequirement) -> str:
    # jinja2: ~0.05 s, only when `ci init` writes a workflow
    from jinja2 import Environment, PackageLoader, StrictUndefined

    _, env_lines = PROVIDERS[provider]
    environment = Environment(
        loader=PackageLoader("proveai.ci", "templates"), undefined=StrictUndefined, keep_trailing_newline=True
    )
    return environment.get_template("proveai.yml.j2").render(
        version=package_version(),
        # a GitHub expression's string literal: a quote is doubled
        sdk_requirement=sdk.requirement.replace("'", "''"),
        python_version=python_version,
        full=full,
        env=(*env_lines, judge_env_line(provider)),
    )


def scaffold(
    root: Path,
    *,
    provider: str = DEFAULT_PROVIDER,
    full: bool = False,
    python_version: str | None = None,
    force: bool = False,
) -> ScaffoldResult:
    if provider not in PROVIDERS:
        raise ProveAIError(
            f"unknown provider {provider!r}",
            suggestions=[f"choose one of: {', '.join(PROVIDERS)}"],
            exit_code=ProveAIExit.USAGE,
        )
    version = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    if not all(part.isdigit() for part in version.split(".")) or version.count(".") not in (1, 2):
        raise ProveAIError(
            f"--python-version {version!r} is not a version like 3.11", exit_code=ProveAIExit.USAGE
        )
    path = root / WORKFLOW_PATH
    if path.exists() and not force:
        raise ProveAIError(
            f"{WORKFLOW_PATH.as_posix()} already exists; not overwritten",
            suggestions=["proveai ci init --force  (replaces it)"],
            exit_code=ProveAIExit.USAGE,
        )
    sdk = sdk_requirement()
    text = render_workflow(provider, full=full, python_version=version, sdk=sdk)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    secret, env_lines = PROVIDERS[provider]
    others = tuple(
        name
        for name, value in env_lines
        if "secrets." in value and name != secret and f"secrets.{name}" in value
    )
    return ScaffoldResult(path=path, secret=secret, provider=provider, extra_secrets=others, sdk=sdk)
