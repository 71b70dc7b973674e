"""Throughput of the judge engine against a local OpenAI-compatible server.

2,000 chat requests against `python -m checkeval.testing.server` with 50 ms latency per request
and at most 32 served at once (the server queues the rest, as vLLM does). Measured in one run:

* engine: `checkeval.judges.OpenAIJudge` with a fresh cache, through the official client on the
  SDK transport `auto` picks (`aiohttp` from `openai[aiohttp]`; `--http-backend` chooses), keeping as
  many requests in flight as the server has slots (`max_concurrency=32`). Run `--repeats` times
  (default 3); `ratio` is the median run, every run is listed. The same requests again must be
  answered from the cache with zero server requests;
* engine_pipelined: the same engine keeping `--pipelined-concurrency` requests in flight (default
  48 = 1.5 x the server's slots): the server queues the excess, so a slot that frees up gets its
  next request at once instead of waiting for the client's turnaround. Also `--repeats` times,
  interleaved with the engine runs so that both see the same machine;
* unbounded: `asyncio.gather` over every request with the official async client (default settings),
  as the official CheckEval code calls its server;
* floor: a minimal keep-alive HTTP/1.1 client on asyncio streams (32 connections, no SDK, no
  cache, about 0.1 ms of CPU per request): what this machine and server allow at the moment of
  the run, so that `ratio` can be read against `floor.ratio` when other work loads the machine;
* sequential: a plain loop with the official sync client over the first `--sequential-n`
  requests (default: all 2,000, about 105 s). The JSON states what was measured; nothing is
  extrapolated.

Lower bound: 2000 * 0.05 / 32 s. ratio = engine wall / bound. Client and server share the
machine: `client_cpu_ms_per_request` and `server_cpu_ms_per_request` (from /proc) say what each
costs, the load averages how contended the machine was. The last stdout line is one JSON object.
"""
import argparse, asyncio, json, os, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def start_server(latency_ms, max_conc):
    p = subprocess.Popen([sys.executable, '-m', 'checkeval.testing.server', '--port', '0', '--latency-ms', str(latency_ms),
                          '--max-concurrency', str(max_conc)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = p.stdout.readline().strip()
    if not line.startswith('listening on '): p.kill(); raise RuntimeError(f'server did not start: {line!r}')
    return p, line.split()[-1]


def stats(url, reset=False):
    base = url.rsplit('/v1', 1)[0]
    if reset:
        urllib.request.urlopen(urllib.request.Request(base + '/stats/reset', data=b'{}', method='POST')).read()
    return json.loads(urllib.request.urlopen(base + '/stats').read())


def proc_cpu(pid) -> float:
    "User + system CPU seconds of process `pid` (Linux /proc; NaN elsewhere)."
    try: f = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    except OSError: return float('nan')
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')


def messages(i): return [{'role': 'user', 'content': f'Request {i}: is the summary coherent? Answer yes or no.'}]


async def raw_floor(url, n, conc):
    "Every request over `conc` keep-alive connections with hand-written HTTP/1.1: the cheapest possible client."
    host, port = url.split('//', 1)[1].split('/', 1)[0].rsplit(':', 1)
    todo, ok = list(range(n))[::-1], [0]
    async def worker():
        r, w = await asyncio.open_connection(host, int(port))
        while todo:
            body = json.dumps(dict(model='local', messages=messages(todo.pop()), max_tokens=4)).encode()
            w.write(b'POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n'
                    % (host.encode(), len(body)) + body)
            head = (await r.readuntil(b'\r\n\r\n')).decode('latin-1').split('\r\n')
            size = next(int(l.split(':', 1)[1]) for l in head if l.lower().startswith('content-length:'))
            data = json.loads(await r.readexactly(size))
            ok[0] += head[0].split()[1] == '200' and bool(data['choices'][0]['message']['content'])
        w.close()
    await asyncio.gather(*(worker() for _ in range(conc)))
    return ok[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=2000)
    ap.add_argument('--latency-ms', type=float, default=50)
    ap.add_argument('--max-concurrency', type=int, default=32)
    ap.add_argument('--sequential-n', type=int, default=None, help='requests in the sequential loop (default: all)')
    ap.add_argument('--pipelined-concurrency', type=int, default=None, help='requests in flight for engine_pipelined (default 1.5 x server slots)')
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--skip-unbounded', action='store_true')
    ap.add_argument('--http-backend', default='auto', choices=['auto', 'aiohttp', 'httpx'])
    a = ap.parse_args()
    if a.pipelined_concurrency is None: a.pipelined_concurrency = (3 * a.max_concurrency) // 2
    if a.sequential_n is None: a.sequential_n = a.n
    from openai import OpenAI, AsyncOpenAI
    from checkeval.judges import OpenAIJudge, JudgeRequest

    srv, url = start_server(a.latency_ms, a.max_concurrency)
    out = dict(bench='judge_throughput', n=a.n, latency_ms=a.latency_ms, server_max_concurrency=a.max_concurrency,
               bound_s=round(a.n * a.latency_ms / 1000 / a.max_concurrency, 4), cpu_count=os.cpu_count())
    try:
        with tempfile.TemporaryDirectory() as d:
            reqs = [JudgeRequest(messages=messages(i), max_tokens=4) for i in range(a.n)]

            def engine_run(conc, tag):
                j = OpenAIJudge('bench', model='local', base_url=url, cache=Path(d) / f'cache-{tag}.sqlite',
                                max_concurrency=conc, progress=False, http_backend=a.http_backend)
                stats(url, reset=True)
                c0, s0 = time.process_time(), proc_cpu(srv.pid)
                t0 = time.perf_counter(); rs = j.generate(reqs); wall = time.perf_counter() - t0
                cpu, scpu = time.process_time() - c0, proc_cpu(srv.pid) - s0
                st = stats(url)
                return j, rs, dict(wall_s=round(wall, 3), ratio=round(wall / out['bound_s'], 4),
                                   client_cpu_ms_per_request=round(cpu / a.n * 1000, 3),
                                   server_cpu_ms_per_request=round(scpu / a.n * 1000, 3) if scpu == scpu else None,
                                   completed=sum(r.ok for r in rs), failed=sum(not r.ok for r in rs),
                                   server_answered=st['answered'], server_max_in_flight=st['max_in_flight'],
                                   duplicates=sum(v - 1 for v in st['by_key'].values()))

            def summary(runs, conc):
                med = sorted(runs, key=lambda r: r['wall_s'])[len(runs) // 2]
                return dict(max_concurrency=conc, median_of=len(runs), **med, runs=[r['wall_s'] for r in runs],
                            failed_in_all_runs=sum(r['failed'] for r in runs))

            out['load_avg_before'] = os.getloadavg()[0]
            runs, piped = [], []
            for i in range(a.repeats):   # interleaved, so that both see the same machine
                j, rs, r = engine_run(a.max_concurrency, f'e{i}'); runs.append(r)
                _, _, r = engine_run(a.pipelined_concurrency, f'p{i}'); piped.append(r)
            out['http_backend'] = j.http_backend
            out['engine'] = summary(runs, a.max_concurrency)
            out['ratio'] = out['engine']['ratio']
            out['engine_pipelined'] = summary(piped, a.pipelined_concurrency)
            stats(url, reset=True)
            t0 = time.perf_counter(); rs2 = j.generate(reqs); wall2 = time.perf_counter() - t0
            st = stats(url)
            out['engine_rerun_from_cache'] = dict(wall_s=round(wall2, 3), completed=sum(r.ok for r in rs2), cached=sum(r.cached for r in rs2),
                                                  server_requests=st['received'],
                                                  identical=[r.text for r in rs] == [r.text for r in rs2])

        stats(url, reset=True)
        c0 = time.process_time(); t0 = time.perf_counter(); ok = asyncio.run(raw_floor(url, a.n, a.max_concurrency))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        out['floor'] = dict(wall_s=round(wall, 3), ratio=round(wall / out['bound_s'], 4), completed=ok,
                            client_cpu_ms_per_request=round(cpu / a.n * 1000, 3), server_answered=stats(url)['answered'])

        if not a.skip_unbounded:
            async def unbounded():
                c = AsyncOpenAI(base_url=url, api_key='not-needed')
                async def one(i):
                    r = await c.chat.completions.create(model='local', messages=messages(i), max_tokens=4)
                    return r.choices[0].message.content
                res = await asyncio.gather(*(one(i) for i in range(a.n)), return_exceptions=True)
                await c.close()
                return res
            stats(url, reset=True)
            t0 = time.perf_counter(); res = asyncio.run(unbounded()); wall = time.perf_counter() - t0
            errs = [r for r in res if isinstance(r, BaseException)]
            out['unbounded_gather'] = dict(wall_s=round(wall, 3), completed=len(res) - len(errs), failed=len(errs),
                                           errors=sorted({type(e).__name__ for e in errs}), server_answered=stats(url)['answered'],
                                           ratio=round(wall / out['bound_s'], 4))

        m = min(a.sequential_n, a.n)
        c = OpenAI(base_url=url, api_key='not-needed')
        stats(url, reset=True)
        ok = bad = 0
        t0 = time.perf_counter()
        for i in range(m):
            try: c.chat.completions.create(model='local', messages=messages(i), max_tokens=4); ok += 1
            except Exception: bad += 1
        wall = time.perf_counter() - t0
        out['sequential'] = dict(measured_requests=m, wall_s=round(wall, 3), completed=ok, failed=bad,
                                 note='measured on the first %d of %d requests; not extrapolated' % (m, a.n) if m < a.n else 'all requests')
        out['load_avg_after'] = os.getloadavg()[0]
        out['machine_note'] = ('client and server share this machine (%d cores) with other work; the load averages say how '
                               'contended it was; the engine needs client_cpu_ms_per_request of CPU per request' % os.cpu_count())
        out['goal'] = dict(ratio_max=1.15, met=out['ratio'] <= 1.15 and out['engine']['failed_in_all_runs'] == 0
                           and out['engine_rerun_from_cache']['server_requests'] == 0)
    finally:
        srv.terminate(); srv.wait(10)
    print(json.dumps(out))


if __name__ == '__main__':
    main()
