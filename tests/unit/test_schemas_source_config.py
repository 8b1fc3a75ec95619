"""schemas.source_config: a typed model per source type; unknown keys, wrong types and identifiers that would
not fit the collection are refused when the file is loaded, naming the key, the source and the file."""

from __future__ import annotations

import pytest

from cairn.errors import ConfigError
from cairn.schemas.config import GitSourceConfig, PagerDutySourceConfig, PdfSourceConfig, WikiSourceConfig, load_config
from cairn.schemas.fields import ARRAY_FIELDS, ARRAY_ITEM_LENGTH, VARCHAR_FIELDS

MINIMAL = {
    "wiki": ('path = "pages"', WikiSourceConfig),
    "pdf": ('uri = "s3://bucket/contracts"', PdfSourceConfig),
    "git": ('repo = "infra.bundle"', GitSourceConfig),
    "pagerduty": ('path = "export"', PagerDutySourceConfig),
}


def _load(tmp_path, body: str):
    path = tmp_path / "cairn.toml"
    path.write_text(body, encoding="utf-8")
    return load_config(path), str(path)


@pytest.mark.parametrize("kind", sorted(MINIMAL))
def test_every_source_type_loads_from_a_minimal_table_with_its_defaults(tmp_path, kind):
    location, model = MINIMAL[kind]
    config, _ = _load(
        tmp_path, f'[[sources]]\nname = "s"\ntype = "{kind}"\ntenant = "acme"\nacl = ["sre"]\n{location}\n'
    )
    source = config.source("s")
    assert type(source) is model and source.batch_size == 32 and source.cleanup == "incremental"


def test_a_misspelt_key_is_refused_naming_key_source_and_file_with_a_suggestion(tmp_path):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, '[[sources]]\nname = "runbooks"\ntype = "wiki"\ntenant = "acme"\npath = "p"\nacls = ["sre"]\n')
    message = str(err.value)
    assert "cairn.toml" in message and "source 'runbooks' (wiki)" in message
    assert "unknown key 'acls'" in message and "did you mean 'acl'?" in message


def test_a_key_of_another_source_type_is_unknown_here(tmp_path):
    with pytest.raises(ConfigError, match=r"source 'docs' \(wiki\): unknown key 'ref'"):
        _load(tmp_path, '[[sources]]\nname = "docs"\ntype = "wiki"\ntenant = "acme"\npath = "p"\nref = "main"\n')


def test_a_wrong_type_is_refused_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"source 'pd' \(pagerduty\): page_size: Input should be a valid integer"):
        _load(tmp_path, '[[sources]]\nname = "pd"\ntype = "pagerduty"\ntenant = "a"\npath = "x"\npage_size = "many"\n')


def test_identifiers_that_would_not_fit_are_refused_never_clipped(tmp_path):
    long_tenant = "t" * (VARCHAR_FIELDS["tenant_id"] + 1)
    with pytest.raises(ConfigError, match=f"tenant 'tttt.*'... is {VARCHAR_FIELDS['tenant_id'] + 1} bytes"):
        _load(tmp_path, f'[[sources]]\nname = "w"\ntype = "wiki"\ntenant = "{long_tenant}"\npath = "p"\n')
    with pytest.raises(ConfigError, match="ACL group"):
        _load(
            tmp_path,
            f'[[sources]]\nname = "w"\ntype = "wiki"\ntenant = "a"\npath = "p"\n'
            f'acl = ["{"g" * (ARRAY_ITEM_LENGTH + 1)}"]\n',
        )
    many = ", ".join(f'"g{i}"' for i in range(ARRAY_FIELDS["access_control_list"] + 1))
    with pytest.raises(ConfigError, match="ACL groups, over the"):
        _load(tmp_path, f'[[sources]]\nname = "w"\ntype = "wiki"\ntenant = "a"\npath = "p"\nacl = [{many}]\n')
    with pytest.raises(ConfigError, match="control characters"):
        _load(tmp_path, '[[sources]]\nname = "w"\ntype = "wiki"\ntenant = "a\\u0000b"\npath = "p"\n')


def test_location_rules_are_checked_at_load_time(tmp_path):
    with pytest.raises(ConfigError, match="exactly one of path"):
        _load(tmp_path, '[[sources]]\nname = "w"\ntype = "pdf"\ntenant = "a"\npath = "p"\nuri = "s3://b/p"\n')
    with pytest.raises(ConfigError, match="exactly one of api_url or path"):
        _load(tmp_path, '[[sources]]\nname = "pd"\ntype = "pagerduty"\ntenant = "a"\n')
    with pytest.raises(ConfigError, match="a git source needs repo"):
        _load(tmp_path, '[[sources]]\nname = "g"\ntype = "git"\ntenant = "a"\n')


def test_access_rules_are_typed_and_their_identifiers_checked(tmp_path):
    base = '[[sources]]\nname = "pd"\ntype = "pagerduty"\ntenant = "a"\npath = "x"\n'
    config, _ = _load(tmp_path, base + 'access = [{ team = "Ops", tenant = "globex", acl = ["ops"] }]\n')
    (rule,) = config.source("pd").access
    assert (rule.team, rule.tenant, rule.acl) == ("Ops", "globex", ["ops"])
    with pytest.raises(ConfigError, match="access.0.colour: unknown|unknown key 'colour'"):
        _load(tmp_path, base + 'access = [{ team = "Ops", colour = "red" }]\n')
    with pytest.raises(ConfigError, match="needs team or service"):
        _load(tmp_path, base + 'access = [{ acl = ["ops"] }]\n')


def test_the_sample_configuration_loads():
    config = load_config("data/cairn.toml")
    assert {type(s) for s in config.sources} == {
        WikiSourceConfig,
        GitSourceConfig,
        PagerDutySourceConfig,
        PdfSourceConfig,
    }


def test_the_committed_configuration_reference_is_what_the_models_say():
    from pathlib import Path

    from cairn.schemas.reference import render

    page = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    rendered = render()
    assert page.read_text(encoding="utf-8") == rendered, (
        "regenerate: python -m cairn.schemas.reference > docs/configuration.md"
    )
    assert "`acls`" not in rendered and "| `acl` |" in rendered and '## [[sources]] type = "pagerduty"' in rendered


def test_values_a_source_would_only_trip_over_mid_run_are_refused_at_load(tmp_path):
    pagerduty = '[[sources]]\nname = "pd"\ntype = "pagerduty"\ntenant = "a"\npath = "x"\n'
    with pytest.raises(
        ConfigError,
        match=r"source 'pd' \(pagerduty\): severity_map: P1 = 'sev9': 'sev9' is not a "
        "valid Severity; allowed: sev1",
    ):
        _load(tmp_path, pagerduty + 'severity_map = { P1 = "sev9" }\n')
    with pytest.raises(ConfigError, match=r"source 'pd' \(pagerduty\): since: 'last week' is not an ISO date"):
        _load(tmp_path, pagerduty + 'since = "last week"\n')
    git = '[[sources]]\nname = "g"\ntype = "git"\ntenant = "a"\nrepo = "r.bundle"\n'
    with pytest.raises(
        ConfigError,
        match=r"source 'g' \(git\): uri_template: '\{repo\}/\{sha\}': unknown placeholder "
        r"\{sha\}; it may use \{repo\}, \{commit\}, \{path\}",
    ):
        _load(tmp_path, git + 'uri_template = "{repo}/{sha}"\n')
    with pytest.raises(ConfigError, match="uri 's3:///contracts' must look like s3://bucket/prefix"):
        _load(tmp_path, '[[sources]]\nname = "w"\ntype = "pdf"\ntenant = "a"\nuri = "s3:///contracts"\n')


def test_the_values_checked_at_load_keep_what_works(tmp_path):
    config, _ = _load(
        tmp_path,
        '[[sources]]\nname = "pd"\ntype = "pagerduty"\ntenant = "a"\npath = "x"\n'
        'since = "2024-01-01T00:00:00Z"\nseverity_map = { P1 = "SEV1" }\n'
        '[[sources]]\nname = "g"\ntype = "git"\ntenant = "a"\nrepo = "r.bundle"\n'
        'uri_template = "https://git.example/r/blob/{commit:.12}/{path}"\n',
    )
    assert config.source("pd").since == "2024-01-01T00:00:00Z" and config.source("pd").severity_map == {"P1": "SEV1"}
    assert config.source("g").uri_template == "https://git.example/r/blob/{commit:.12}/{path}"
