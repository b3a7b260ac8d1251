"""Fake credentials where a real machine keeps them: every variable the bundled CLI reads, and the stores.

`VARIABLES` holds every credential variable the bundled CLI reads (from `strings` on its binary, CLI
2.1.337): its own list of what it keeps from a sandboxed subprocess (`CLI_SCRUB_LIST`, checked against the
installed binary by `cli_scrub_list()`), its OAuth, session and file-descriptor variables, and the
tokens of the git hosts it knows. `fake_environment()` gives each a value no test could print by chance;
`plant(home)` writes fake stores under a home directory (`~/.claude/.credentials.json`, the CLI's OAuth
tokens on Linux, and `~/.ssh`, `~/.aws`, `~/.netrc` …). `leaks(text, values)` lists what came out.
"""

from __future__ import annotations

import json
import mmap
import re
import secrets
from pathlib import Path


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


CLI_SCRUB_LIST = _names("""
    ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN CLAUDE_CODE_SESSIONS_OAUTH_TOKEN CLAUDE_CODE_MARL_SORREL
    CLAUDE_CODE_RUNNER_MODEL_SOCKET CLAUDE_CODE_ARTIFACTS_API_TOKEN CLAUDE_CODE_MEMORY_API_TOKEN
    CLAUDE_CODE_SLACK_TAG_TOKEN ANTHROPIC_AUTH_TOKEN ANTHROPIC_FOUNDRY_API_KEY
    ANTHROPIC_FOUNDRY_AUTH_TOKEN ANTHROPIC_AWS_API_KEY ANTHROPIC_CUSTOM_HEADERS AWS_SECRET_ACCESS_KEY
    AWS_SESSION_TOKEN AWS_BEARER_TOKEN_BEDROCK GOOGLE_APPLICATION_CREDENTIALS GOOGLE_GHA_CREDS_PATH
    AZURE_CLIENT_SECRET IDENTITY_HEADER MSI_SECRET AZURE_CLIENT_CERTIFICATE_PATH
    AZURE_CLIENT_CERTIFICATE_PASSWORD AZURE_PASSWORD AZURE_FEDERATED_TOKEN_FILE
    AWS_WEB_IDENTITY_TOKEN_FILE AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
    AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_AUTHORIZATION_TOKEN
    AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE CLOUDSDK_AUTH_ACCESS_TOKEN GOOGLE_OAUTH_ACCESS_TOKEN
    CLAUDE_CODE_OAUTH_REFRESH_TOKEN HF_TOKEN HUGGING_FACE_HUB_TOKEN HUGGINGFACEHUB_API_TOKEN
    NODE_AUTH_TOKEN NUGET_AUTH_TOKEN CARGO_REGISTRY_TOKEN TWINE_PASSWORD TWINE_USERNAME PYPI_TOKEN
    PYPI_API_TOKEN UV_PUBLISH_TOKEN UV_PUBLISH_PASSWORD UV_PUBLISH_USERNAME FLIT_PASSWORD FLIT_USERNAME
    HATCH_INDEX_AUTH HATCH_INDEX_USER GEM_HOST_API_KEY MATURIN_PYPI_TOKEN MATURIN_PASSWORD
    MATURIN_USERNAME CONAN_LOGIN_USERNAME CONAN_PASSWORD ANACONDA_API_TOKEN BINSTAR_API_TOKEN
    VAULT_TOKEN VAULT_AUTH_TOKEN VAULT_ROLE_ID VAULT_SECRET_ID CONSUL_HTTP_TOKEN CONSUL_HTTP_AUTH
    NOMAD_TOKEN NOMAD_HTTP_AUTH CI_REGISTRY_USER CI_DEPLOY_USER JF_USER FASTLANE_SESSION
    MATCH_GIT_BASIC_AUTHORIZATION SONAR_TOKEN SONARQUBE_SCANNER_PARAMS SONAR_SCANNER_JSON_PARAMS
    SLACK_WEBHOOK_URL SLACK_WEBHOOK DISCORD_WEBHOOK DISCORD_WEBHOOK_URL TEAMS_WEBHOOK_URL
    MS_TEAMS_WEBHOOK_URI ANTHROPIC_IDENTITY_TOKEN ANTHROPIC_IDENTITY_TOKEN_FILE
    CLOUDSDK_AUTH_ACCESS_TOKEN_FILE CLOUDSDK_AUTH_AUTHORIZATION_TOKEN_FILE AZURE_AUTH_LOCATION
    ACTIONS_ID_TOKEN_REQUEST_TOKEN ACTIONS_ID_TOKEN_REQUEST_URL ACTIONS_RUNTIME_TOKEN
    ACTIONS_RUNTIME_URL ALL_INPUTS VSS_NUGET_EXTERNAL_FEED_ENDPOINTS
    ARTIFACTS_CREDENTIALPROVIDER_EXTERNAL_FEED_ENDPOINTS VSS_NUGET_ACCESSTOKEN
    ARTIFACTS_CREDENTIALPROVIDER_ACCESSTOKEN COMPOSER_AUTH OVERRIDE_GITHUB_TOKEN DEFAULT_WORKFLOW_TOKEN
    SSH_SIGNING_KEY
""")
"""The bundled CLI's own list of credential variables it keeps from a sandboxed subprocess."""

_MORE = _names("""
    AWS_ACCESS_KEY_ID CLAUDE_CODE_SESSION_ACCESS_TOKEN CLAUDE_CODE_CLIENT_KEY_PASSPHRASE
    CLAUDE_CODE_MESSAGING_TOKEN CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_HFI_BEARER_TOKEN
    CLAUDE_BRIDGE_OAUTH_TOKEN CLAUDE_TRUSTED_DEVICE_TOKEN AGENT_PROXY_AUTH_TOKEN
    CLAUDE_CODE_MCP_SERVE_AUTH_TOKEN CLAUDE_SESSION_INGRESS_TOKEN_FILE CLAUDE_CODE_HOST_CREDS_FILE
    MCP_CLIENT_SECRET MCP_XAA_IDP_CLIENT_SECRET ENVIRONMENT_SERVICE_KEY SELF_HOSTED_RUNNER_POOL_SECRET
    SELF_HOSTED_RUNNER_ENVIRONMENT_SECRET CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR
    CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR
    CLAUDE_CODE_WEBSOCKET_AUTH_FILE_DESCRIPTOR CCR_AGENT_PROXY_TOKEN_FILE_DESCRIPTOR
    CCR_OAUTH_TOKEN_FILE GITHUB_TOKEN GH_TOKEN GH_ENTERPRISE_TOKEN GITHUB_ENTERPRISE_TOKEN GITLAB_TOKEN
    GITLAB_ACCESS_TOKEN GLAB_TOKEN AZURE_DEVOPS_EXT_PAT BITBUCKET_TOKEN GITEA_TOKEN
    CLOUDSDK_AUTH_ACCESS_TOKEN ANTHROPIC_WEBHOOK_SIGNING_KEY ANTHROPIC_WORK_SECRET
""")
VARIABLES = tuple(dict.fromkeys((*CLI_SCRUB_LIST, *_MORE)))
"""Every credential variable the bundled CLI reads."""

CHANGE_THE_CLI = frozenset(
    _names("""
    ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN CLAUDE_CODE_RUNNER_MODEL_SOCKET
    CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_HOST_CREDS_FILE CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR
    CLAUDE_CODE_GATEWAY_TOKEN_FILE_DESCRIPTOR CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR
    CLAUDE_CODE_WEBSOCKET_AUTH_FILE_DESCRIPTOR CCR_AGENT_PROXY_TOKEN_FILE_DESCRIPTOR
    ANTHROPIC_IDENTITY_TOKEN ANTHROPIC_IDENTITY_TOKEN_FILE CLAUDE_SESSION_INGRESS_TOKEN_FILE
    CCR_OAUTH_TOKEN_FILE
""")
)
"""Variables that change how the CLI itself reaches the model (its key, a socket or descriptor it opens,
a file it must read): set to fake values they stop the CLI, so a run through the CLI leaves them to the
scripted model's own (its fake key counts as a credential there). The launcher's tests set them all."""

STORES = {
    ".claude/.credentials.json": "oauth",
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n{token}\n-----END OPENSSH PRIVATE KEY-----\n",
    ".aws/credentials": "[default]\naws_access_key_id = AKIAFAKE\naws_secret_access_key = {token}\n",
    ".netrc": "machine github.com login me password {token}\n",
    ".git-credentials": "https://me:{token}@github.com\n",
    ".config/gh/hosts.yml": "github.com:\n    oauth_token: {token}\n",
    ".docker/config.json": '{{"auths": {{"ghcr.io": {{"auth": "{token}"}}}}}}\n',
    ".bash_history": "export GH_TOKEN={token}\n",
}
"""Credential stores under a home directory, as `plant()` writes them (`{token}`: a fresh fake value)."""


def fake(name: str) -> str:
    """A value no test prints by chance: the name's own marker and random hex."""
    return f"fake-{name.lower().replace('_', '-')}-{secrets.token_hex(8)}"


def fake_environment(names: tuple[str, ...] | frozenset[str] = VARIABLES) -> dict[str, str]:
    return {name: fake(name) for name in names}


def plant(home: Path) -> dict[str, str]:
    """Write the fake stores under `home`; return each file's fake secret by path."""
    planted = {}
    for relative, template in STORES.items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        token = fake(relative.strip(".").replace("/", "-").replace(".", "-"))
        if template == "oauth":
            body = {"claudeAiOauth": {"accessToken": token, "refreshToken": token + "-refresh",
                                      "expiresAt": 4102444800000, "scopes": ["user:inference"]}}  # fmt: skip
            path.write_text(json.dumps(body))
        else:
            path.write_text(template.format(token=token))
        path.chmod(0o600)
        planted[str(path)] = token
    return planted


def leaks(text: str, values: dict[str, str]) -> list[str]:
    """The names whose fake value appears in `text`."""
    return [name for name, value in values.items() if value in text]


def cli_scrub_list(binary: Path) -> tuple[str, ...] | None:
    """The CLI's own list of subprocess credential variables, read from its binary; None when not found."""
    start = b'["ANTHROPIC_API_KEY","CLAUDE_CODE_OAUTH_TOKEN",'
    with binary.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(start)
        if at < 0:
            return None
        end = data.find(b"]", at)
        return tuple(re.findall(r'"([A-Z0-9_]+)"', data[at : end + 1].decode("latin-1")))
