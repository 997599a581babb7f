"""Log redaction and the JSON line format, on records made here (no services)."""

from __future__ import annotations

import io
import logging

import orjson
import pytest

from pgcdc.config import build_config, env_overrides, is_secret_property
from pgcdc.errors import ConfigError
from pgcdc.logs import MASK, JsonFormatter, Redactor, secrets_of

BASE = {"topic.prefix": "x", "database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "bootstrap.servers": "b:9092"}


@pytest.mark.parametrize(("name", "secret"), [
    ("database.password", True), ("database.sslpassword", True), ("sasl.password", True),
    ("sasl.jaas.config", True), ("ssl.key.pem", True), ("ssl.key.password", True),
    ("sasl.oauthbearer.client.secret", True), ("database.password.file", False), ("database.sslkey", False),
    ("database.user", False), ("ssl.ca.location", False),
])
def test_secret_property_names(name: str, secret: bool) -> None:
    assert is_secret_property(name) is secret


def _emit(redactor: Redactor, formatter: logging.Formatter, *args: object, exc: BaseException | None = None) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    handler.addFilter(redactor)
    logger = logging.getLogger(f"test.logs.{id(out)}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.error(*args, exc_info=exc)  # type: ignore[arg-type]
    finally:
        logger.removeHandler(handler)
    return out.getvalue()


def test_secrets_of_the_config_are_masked_in_messages_arguments_and_tracebacks() -> None:
    config = build_config({**BASE, "database.password": "pg-Secret-1", "kafka.sasl.password": "kafka-Secret-2",
                           "kafka.sasl.jaas.config": "jaas-Secret-3", "kafka.acks": "all"})
    assert sorted(secrets_of(config)) == ["jaas-Secret-3", "kafka-Secret-2", "pg-Secret-1"]
    redactor = Redactor()
    redactor.add(secrets_of(config))
    try:
        raise RuntimeError("connect failed with password=pg-Secret-1")
    except RuntimeError as err:
        text = _emit(redactor, logging.Formatter("%(message)s"), "using %s and %s", "kafka-Secret-2", "all", exc=err)
    assert "Secret" not in text and "using *** and all" in text and f"password={MASK}" in text
    assert repr(config).count("Secret") == 0


def test_json_lines() -> None:
    redactor = Redactor()
    redactor.add(["pg-Secret-1"])
    try:
        raise ValueError("bad pg-Secret-1")
    except ValueError as err:
        line = _emit(redactor, JsonFormatter(), "failed: %s", "pg-Secret-1 here", exc=err)
    entry = orjson.loads(line)
    assert entry["level"] == "ERROR" and entry["message"] == "failed: *** here"
    assert entry["ts"].endswith("+00:00") and entry["logger"].startswith("test.logs.")
    assert "ValueError: bad ***" in entry["exc_info"]


def test_a_password_equal_to_the_user_name_does_not_mask_the_user() -> None:
    config = build_config({**BASE, "database.user": "plain", "database.password": "plain"})
    assert secrets_of(config) == []


def test_empty_and_tiny_values_are_not_secrets_to_mask() -> None:
    redactor = Redactor()
    redactor.add(["", "ab"])
    assert redactor.redact("abc") == "abc"


def test_password_from_a_file(tmp_path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("from-File-1\n")
    assert build_config({**BASE, "database.password.file": str(secret)}).database_password == "from-File-1"
    with pytest.raises(ConfigError, match=r"^database.password.file: set either"):
        build_config({**BASE, "database.password.file": str(secret), "database.password": "x"})
    with pytest.raises(ConfigError, match=r"^database.password.file: cannot read .*missing"):
        build_config({**BASE, "database.password.file": str(tmp_path / "missing")})
    assert env_overrides({"PGCDC_DATABASE_PASSWORD_FILE": "/run/secrets/pg"}) == {
        "database.password.file": "/run/secrets/pg"}
