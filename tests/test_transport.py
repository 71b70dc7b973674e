"""The `openai` backend over TLS, with plain `aiohttp` posts (`direct`) and on the SDK's public transports (`aiohttp`, `httpx`): the local
server speaks HTTPS with a self-signed certificate made by `openssl` for the test. Trusted
through the judge's SSL context, requests are answered over kept-alive connections; untrusted,
every request fails as a connection error (verification stays on)."""
import shutil, ssl, subprocess, unittest.mock
import pytest
from checkeval.judges import OpenAIJudge, JudgeRequest
from checkeval.judges.engine import JudgeUnavailable
from checkeval.judges import openai as openai_backend
from checkeval.testing.server import ChatServer

pytestmark = pytest.mark.skipif(shutil.which('openssl') is None, reason='needs the openssl command')
BACKENDS = ['direct'] + (['aiohttp', 'httpx'] if openai_backend.aiohttp_available() else ['httpx'])


@pytest.fixture(scope='module')
def certificate(tmp_path_factory):
    d = tmp_path_factory.mktemp('tls')
    key, cert = d / 'key.pem', d / 'cert.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', str(key), '-out', str(cert),
                    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
                   check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
    return ctx, cert


def asks(n): return [JudgeRequest(messages=[{'role': 'user', 'content': f'Question {i}: is it fluent?'}], max_tokens=4) for i in range(n)]


@pytest.mark.parametrize('backend', BACKENDS)
def test_https_with_trusted_certificate(certificate, backend):
    server_ctx, cert = certificate
    with ChatServer(ssl_context=server_ctx, latency_ms=5) as s, \
         unittest.mock.patch.object(openai_backend, '_SSL_CONTEXT', ssl.create_default_context(cafile=str(cert))):
        assert s.url.startswith('https://')
        j = OpenAIJudge('tls', model='local', base_url=s.url, cache=False, max_concurrency=2, max_retries=0, progress=False,
                        http_backend=backend)
        rs = j.generate(asks(8))
        assert all(r.ok for r in rs), [r.error for r in rs]
        st = s.stats()
    assert st['answered'] == 8 and st['connections'] <= 2        # kept alive over TLS too


@pytest.mark.parametrize('backend', BACKENDS)
def test_https_untrusted_certificate_is_refused(certificate, backend):
    server_ctx, _ = certificate
    with ChatServer(ssl_context=server_ctx) as s:
        j = OpenAIJudge('tls', model='local', base_url=s.url, cache=False, max_retries=0, progress=False, http_backend=backend)
        with pytest.raises(JudgeUnavailable, match='certificate verify failed'): j.generate(asks(1))   # said once, before any request
        assert s.stats()['answered'] == 0
        j.preflight = False                                           # and each request says it too, when the check is off
        r = j.generate(asks(1))[0]
    assert r.error.startswith("connection error") and "certificate verify failed" in r.error.lower(), r.error
