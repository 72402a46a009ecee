"""Start and drive the wire-level Service Bus stand-in (``tests/wire/broker.js``).

Why: the Azure adapters must meet the protocol the real ``azure-servicebus`` SDK speaks, not
a fake of the SDK. The stand-in is a node process (npm ``rhea`` for AMQP 1.0, node's https
for the administration API) on 127.0.0.1, on ports the OS picks. This module makes its TLS
certificate, starts it, waits for its ready line, and gives the tests what they need to
point the SDK at it: an emulator connection string, a token credential, the CA file.

Test tooling only: never imported by the app.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import selectors
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken, AccessTokenInfo

BROKER_JS = Path(__file__).resolve().with_name("broker.js")
REPO = Path(__file__).resolve().parents[2]

MANAGE_TOKEN = "token-with-manage"
"""A bearer token the stand-in grants Manage, Listen and Send (Data Owner)."""
LISTEN_SEND_TOKEN = "token-listen-send"
"""A bearer token the stand-in grants Listen and Send only (Data Sender + Data Receiver)."""
LISTEN_TOKEN = "token-listen-only"
"""A bearer token the stand-in grants Listen only (Data Receiver)."""
TOKENS = {MANAGE_TOKEN: ["Manage", "Listen", "Send"], LISTEN_SEND_TOKEN: ["Listen", "Send"],
          LISTEN_TOKEN: ["Listen"]}

SAS_KEY_NAME = "RootManageSharedAccessKey"
SAS_KEY_VALUE = "SAS_KEY_VALUE"
"""The Service Bus emulator's published placeholder key (not a secret)."""


class StandInUnavailable(RuntimeError):
    """The stand-in cannot run here (no node, no rhea); the message says what is missing."""


class StaticTokenCredential:
    """A token credential that returns one fixed bearer token (what a managed identity
    would obtain from Entra ID; no Entra ID is reachable from the tests).

    Parameters
    ----------
    token : str
        The token to hand out.
    """

    def __init__(self, token: str) -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        """Return the token, valid for an hour; records the scopes asked for."""
        self.scopes.append(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)

    def get_token_info(self, *scopes: str, options: Any = None) -> AccessTokenInfo:
        """Return the token as :class:`AccessTokenInfo` (newer azure-core clients)."""
        self.scopes.append(scopes)
        return AccessTokenInfo(self.token, int(time.time()) + 3600)

    def close(self) -> None:
        """Nothing to close."""


def _write_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA), and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "servicebus-wire-stand-in")])
    now = datetime.datetime.now(datetime.UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=False,
            content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def node_missing_reason() -> str | None:
    """Why the stand-in cannot run here, or None if node and rhea are installed."""
    if shutil.which("node") is None:
        return "node is not installed (the wire-level Service Bus stand-in runs on node 20)"
    if not (REPO / "node_modules" / "rhea" / "package.json").is_file():
        return "npm package rhea is missing: run `npm ci` in the repository root"
    return None


class ServiceBusStandIn:
    """A running stand-in namespace; a context manager that stops it on exit.

    Parameters
    ----------
    startup_timeout_s : float
        How long to wait for the ready line.

    Attributes
    ----------
    amqp_port, https_port : int
        Where it listens on 127.0.0.1 once started.
    ca_file : Path
        The PEM certificate the HTTPS side serves (trust it to verify TLS).
    """

    def __init__(self, *, startup_timeout_s: float = 30.0) -> None:
        self._timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self.amqp_port = 0
        self.https_port = 0
        self.ca_file = Path()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ServiceBusStandIn:
        """Start the node process and wait until both listeners are ready.

        Raises
        ------
        StandInUnavailable
            If node or rhea is missing, or the process exits or stays silent past the
            timeout (its output is in the message).
        """
        reason = node_missing_reason()
        if reason:
            raise StandInUnavailable(reason)
        self._folder = tempfile.TemporaryDirectory(prefix="servicebus-stand-in-")
        folder = Path(self._folder.name)
        self.ca_file, key_file = _write_certificate(folder)
        config = {"certFile": str(self.ca_file), "keyFile": str(key_file), "tokens": TOKENS,
                  "sasKeys": {SAS_KEY_NAME: {"key": SAS_KEY_VALUE,
                                             "rights": ["Manage", "Listen", "Send"]}}}
        log = (folder / "broker.log").open("wb")
        self._process = subprocess.Popen(
            [shutil.which("node") or "node", str(BROKER_JS), json.dumps(config)],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        log.close()
        line = self._read_line(self._timeout_s)
        if line is None:
            output = (folder / "broker.log").read_text(errors="replace")
            self.stop()
            raise StandInUnavailable(f"the stand-in did not start within {self._timeout_s} s; "
                                     f"output:\n{output}")
        ports = json.loads(line)
        self.amqp_port, self.https_port = ports["amqpPort"], ports["httpsPort"]
        return self

    def _read_line(self, timeout_s: float) -> str | None:
        assert self._process is not None and self._process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self._process.stdout, selectors.EVENT_READ)
        try:
            if not selector.select(timeout_s):
                return None
            line = self._process.stdout.readline().decode()
            return line or None
        finally:
            selector.close()

    def stop(self) -> None:
        """Stop the process (closing its stdin ends it; then SIGTERM, SIGKILL)."""
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> ServiceBusStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ addresses
    @property
    def amqp_namespace(self) -> str:
        """``127.0.0.1:<amqp port>``: what the SDK connects to in emulator (plain AMQP) mode."""
        return f"127.0.0.1:{self.amqp_port}"

    @property
    def https_namespace(self) -> str:
        """``127.0.0.1:<https port>``: the administration API's host (the SDK adds https://)."""
        return f"127.0.0.1:{self.https_port}"

    def connection_string(self) -> str:
        """The emulator's form of connection string: ``UseDevelopmentEmulator=true`` makes
        azure-servicebus use plain AMQP on the given port instead of TLS on 5671."""
        return (f"Endpoint=sb://{self.amqp_namespace};SharedAccessKeyName={SAS_KEY_NAME};"
                f"SharedAccessKey={SAS_KEY_VALUE};UseDevelopmentEmulator=true;")

    def token_client(self, token: str = MANAGE_TOKEN, **kwargs: Any) -> Any:
        """A ServiceBusClient authenticating with a bearer token, as a managed identity does.

        ``use_tls=False`` is the switch that ``from_connection_string`` sets from
        ``UseDevelopmentEmulator=true`` (azure-servicebus 7.15); the SDK then keeps the port
        and speaks plain AMQP.
        """
        from azure.servicebus import ServiceBusClient

        return ServiceBusClient(self.amqp_namespace, StaticTokenCredential(token),
                                use_tls=False, **kwargs)

    # ------------------------------------------------------------------ test control
    def _control(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        request = urllib.request.Request(
            f"https://{self.https_namespace}/$test/{path}", method="POST",
            data=json.dumps(body or {}).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return json.loads(response.read() or b"{}")

    def create_queue(self, name: str, *, lock_duration_s: float = 30.0,
                     max_delivery_count: int = 10,
                     requires_duplicate_detection: bool = True) -> str:
        """Create a queue (as Bicep would); returns its name."""
        self._control("queues", {"name": name, "lockDurationMs": int(lock_duration_s * 1000),
                                 "maxDeliveryCount": max_delivery_count,
                                 "requiresDuplicateDetection": requires_duplicate_detection})
        return name

    def expire_locks(self, queue: str) -> int:
        """Make the broker drop every lock it holds on ``queue`` (the client is not told).

        Returns
        -------
        int
            How many locks were dropped.
        """
        return int(self._control(f"expire-locks/{queue}")["expired"])
