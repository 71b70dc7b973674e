"""Throughput of the rehearsal's request path (`checkeval rehearse`), before and after its speed-ups, in one run.

Workload: `checkeval.runs.evaluate(method, benchmark, judge, limit)` for every method of `--methods` and every
judge of `--judges` (by default CheckEval and G-Eval on 64 SummEval summaries, three of CheckEval's judges:
every judge sends the same prompts, as in the papers' grid), through the official OpenAI client, the SQLite
judge cache and the methods, against the simulated judges of `python -m checkeval.testing.rehearsal`.
Measured in two configurations, each with a fresh server and a fresh judge cache, interleaved `--repeats`
times so that both see the same machine:

* baseline: the paths as they were before the speed-ups, switched back on: every rendered request reads
  and compiles its prompt template (YAML + Jinja) and resolves the template folders again, and the server
  looks every prompt up in its item index (`--memo-size 0`);
* current: templates compiled once per version of their file, folders resolved once per setting, the
  server remembering the item of each prompt it has seen.

For each: requests answered, wall seconds, requests per second, client and server CPU milliseconds per
request (from /proc), and the load average around it (the machine is shared: read req/s with the CPU
figures). `speedup` compares the medians. Nothing is extrapolated here. The last stdout line is one JSON object.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml
import checkeval.prompts as prompts
from checkeval.rehearse import load_rehearsal, planted_spec, rehearsal_judges, _environment
from checkeval.runs import evaluate
from checkeval.settings import ENV_RUNS, ENV_JUDGES, ENV_CACHE, ENV_FIGURES, ENV_LABEL, ENV_PROGRESS, prompt_dirs

_CURRENT_LOAD = prompts.load_template

def _uncached_load(name):
    "The template loader before the cache: folders resolved and the file parsed and compiled on every call."
    for d in prompt_dirs():
        if (d/f'{name}.yaml').exists(): return prompts.PromptTemplate.from_file(d/f'{name}.yaml')
    raise prompts.DataError(f'no template {name!r}')

def _cpu(pid) -> float:
    f = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12]))/os.sysconf('SC_CLK_TCK')

def start_server(bench, planted, work, memo_size):
    spec = work/'planted.json'; spec.write_text(json.dumps(planted))
    p = subprocess.Popen([sys.executable, '-m', 'checkeval.testing.rehearsal', '--port', '0', '--benchmarks', bench, '--judges', str(spec),
                          '--memo-size', str(memo_size)], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                         env={**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(ROOT), os.environ.get('PYTHONPATH')]))})
    line = p.stdout.readline().strip()
    if not line.startswith('listening on '): p.kill(); raise RuntimeError(f'server did not start: {line!r}')
    return p, line.split()[-1]

def answered(url) -> int:
    return json.load(urllib.request.urlopen(url.rsplit('/v1', 1)[0] + '/stats', timeout=60))['answered']

def measure(config, a, cfg, work) -> dict:
    "One configuration: a fresh server and cache, every (method, judge) evaluated; the counters."
    work = Path(tempfile.mkdtemp(prefix=f'rthru-{config}-', dir=work))
    jfile, env = rehearsal_judges(a.judges)
    (work/'judges.yaml').write_text(yaml.safe_dump(jfile, sort_keys=False))
    proc, url = start_server(a.benchmark, planted_spec(cfg, a.judges), work, 0 if config == 'baseline' else 200_000)
    prompts.load_template = _uncached_load if config == 'baseline' else _CURRENT_LOAD
    restore = _environment({**{k: v.format(url=url) for k, v in env.items()}, ENV_RUNS: work/'runs', ENV_JUDGES: work/'judges.yaml',
                            ENV_CACHE: work/'cache', ENV_FIGURES: work/'figures', ENV_LABEL: 'rehearsal throughput', ENV_PROGRESS: '0'})
    try:
        load0, s0, c0, t0 = os.getloadavg()[0], _cpu(proc.pid), time.process_time(), time.perf_counter()
        for m in a.methods:
            for j in a.judges: evaluate(m, a.benchmark, j, limit=a.limit)
        wall, ccpu, scpu = time.perf_counter() - t0, time.process_time() - c0, _cpu(proc.pid) - s0
        n = answered(url)
    finally:
        restore(); prompts.load_template = _CURRENT_LOAD
        proc.terminate(); proc.wait(10); shutil.rmtree(work, ignore_errors=True)
    return dict(config=config, requests=n, wall_s=round(wall, 2), requests_per_s=round(n/wall, 1),
                client_cpu_ms_per_request=round(1000*ccpu/n, 3), server_cpu_ms_per_request=round(1000*scpu/n, 3),
                load_before=round(load0, 2), load_after=round(os.getloadavg()[0], 2))

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--benchmark', default='summeval'); p.add_argument('--limit', type=int, default=64)
    p.add_argument('--methods', nargs='+', default=['checkeval', 'geval'])
    p.add_argument('--judges', nargs='+', default=['llama-3.1-70b', 'mistral-large', 'qwen2.5-72b'])
    p.add_argument('--repeats', type=int, default=2)
    a = p.parse_args(argv)
    cfg = load_rehearsal()
    import openai, checkeval.judges.openai   # imports paid before the first measurement
    runs = []
    with tempfile.TemporaryDirectory(prefix='rthru-bench-') as work:
        for r in range(a.repeats):
            for config in (('baseline', 'current') if r % 2 == 0 else ('current', 'baseline')):
                runs.append(measure(config, a, cfg, Path(work))); print(json.dumps(runs[-1]), flush=True)
    med = {c: {k: round(statistics.median(x[k] for x in runs if x['config'] == c), 3)
               for k in ('requests_per_s', 'client_cpu_ms_per_request', 'server_cpu_ms_per_request', 'wall_s')} for c in ('baseline', 'current')}
    cpu = {c: med[c]['client_cpu_ms_per_request'] + med[c]['server_cpu_ms_per_request'] for c in med}
    out = dict(bench='rehearsal_throughput', benchmark=a.benchmark, limit=a.limit, methods=a.methods, judges=a.judges, repeats=a.repeats,
               requests=runs[0]['requests'], median=med, speedup_requests_per_s=round(med['current']['requests_per_s']/med['baseline']['requests_per_s'], 2),
               speedup_cpu_per_request=round(cpu['baseline']/cpu['current'], 2),
               load_average=[round(x, 2) for x in os.getloadavg()], runs=runs, cpus=os.cpu_count())
    print(json.dumps(out))

if __name__ == '__main__': main()
