"""`checkeval.transport.H11Transport` over TLS: a local HTTPS server with a self-signed
certificate made by `openssl` for the test. The certificate is trusted through `ssl_context`;
without it the handshake must fail as a connection error (verification stays on)."""
import asyncio, http.server, json, shutil, ssl, subprocess, threading
import pytest
from checkeval.transport import H11Transport, httpx

pytestmark = pytest.mark.skipif(shutil.which('openssl') is None, reason='needs the openssl command')


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('content-length', 0)))
        out = json.dumps({'echo': body.decode(), 'host': self.headers.get('host')}).encode()
        self.send_response(200); self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(out))); self.end_headers(); self.wfile.write(out)


@pytest.fixture
def https_server(tmp_path):
    key, cert = tmp_path / 'key.pem', tmp_path / 'cert.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', str(key), '-out', str(cert),
                    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
                   check=True, capture_output=True)
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Echo)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f'https://localhost:{srv.server_address[1]}', cert
    srv.shutdown()


def test_https_with_trusted_certificate(https_server):
    url, cert = https_server
    async def run():
        tr = H11Transport(max_connections=2, ssl_context=ssl.create_default_context(cafile=str(cert)))
        async with httpx.AsyncClient(transport=tr) as c:
            rs = await asyncio.gather(*(c.post(url + '/x', content=f'm{i}'.encode()) for i in range(6)))
        return [r.json()['echo'] for r in rs], tr.opened
    echoes, opened = asyncio.run(run())
    assert echoes == [f'm{i}' for i in range(6)]
    assert opened <= 2          # kept alive over TLS too


def test_https_untrusted_certificate_is_refused(https_server):
    url, _ = https_server
    async def run():
        async with httpx.AsyncClient(transport=H11Transport()) as c: await c.post(url + '/x', content=b'z')
    with pytest.raises(httpx.ConnectError, match='CERTIFICATE_VERIFY_FAILED|certificate verify failed'):
        asyncio.run(run())
