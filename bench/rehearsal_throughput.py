"""Throughput of the rehearsal's request path (`checkeval rehearse`): this tree against an older one and the oldest path, in one run.

Workload: `checkeval.runs.evaluate(method, benchmark, judge, limit)` for every method of `--methods` and every
judge of `--judges` (by default CheckEval and G-Eval on 64 SummEval summaries, six of CheckEval's judges:
every judge sends the same prompts, as in the papers' grid), through the official OpenAI client, the SQLite
judge cache and the methods, against the simulated judges of `python -m checkeval.testing.rehearsal`.
Every configuration runs in a fresh process of its own tree, with a fresh server (of that tree) and a fresh
judge cache, interleaved `--repeats` times so that all see the same machine:

* baseline: this tree with the paths before the first speed-ups switched back on: every rendered request
  reads and compiles its prompt template again, and the server looks every prompt up (`--memo-size 0`);
* previous: the tree of git revision `--ref` (by default the one before the third round of speed-ups:
  requests to a server of one's own sent through the official client instead of plain `aiohttp`
  posts), exported with `git archive` into a temporary folder;
* current: this tree.

For each: requests answered, wall seconds, requests per second, client and server CPU milliseconds per
request (from the processes' own clocks and /proc), the client's CPU inside `Judge.generate` (the request
path: engine, OpenAI client, cache) apart from the rest (methods building prompts and reading replies,
loading the benchmark once per run), and the load average around it: the machine is shared, so read
req/s together with the CPU figures. `speedup_*` compare the medians with the previous tree.

`--count` (default on) counts the requests of the full rehearsal (configs/rehearsal.yaml at the papers'
sizes) with the methods' dry runs (`checkeval.reproduction.execution.ScaledDryRun`, 32 sampled items per point, scaled);
from it the output gives PROJECTIONS (not measurements): full requests / measured req/s, and full requests x
CPU ms per request / 2 cores (the time if the two cores did nothing else and the client used both).
The last stdout line is one JSON object.
"""
import argparse, collections, json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DEFAULT_REF = 'aff0dfb'   # the tree before the third round of speed-ups (issue 26, item 4): official client for every server

def _cpu(pid) -> float:
    f = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12]))/os.sysconf('SC_CLK_TCK')

def _env(tree) -> dict:
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(filter(None, [str(tree), os.environ.get('PYTHONPATH')]))}

def start_server(tree, bench, planted, work, memo_size):
    spec = work/'planted.json'; spec.write_text(json.dumps(planted))
    p = subprocess.Popen([sys.executable, '-m', 'checkeval.testing.rehearsal', '--port', '0', '--benchmarks', bench, '--judges', str(spec),
                          '--memo-size', str(memo_size)], stdout=subprocess.PIPE, text=True, cwd=tree, env=_env(tree))
    line = p.stdout.readline().strip()
    if not line.startswith('listening on '): p.kill(); raise RuntimeError(f'server did not start: {line!r}')
    return p, line.split()[-1]

def answered(url) -> int:
    return json.load(urllib.request.urlopen(url.rsplit('/v1', 1)[0] + '/stats', timeout=60))['answered']

def worker(a):
    "One configuration, in this process (whose `checkeval` is the tree's): fresh server and cache, every (method, judge) evaluated."
    tree, work = Path(a.tree), Path(tempfile.mkdtemp(prefix=f'rthru-{a.config}-', dir=a.work))
    sys.path.insert(0, str(tree))
    import yaml, openai
    import checkeval.prompts as prompts, checkeval.judges.openai
    from checkeval.judges.engine import Judge
    from checkeval.reproduction.rehearsal import load_rehearsal, planted_spec, rehearsal_judges, _environment
    from checkeval.runs import evaluate
    from checkeval.settings import ENV_RUNS, ENV_JUDGES, ENV_CACHE, ENV_FIGURES, ENV_LABEL, ENV_PROGRESS, prompt_dirs
    assert Path(checkeval.judges.openai.__file__).resolve().is_relative_to(tree.resolve()), 'the tree under test is not the one imported'
    if a.config == 'baseline':          # the template loader before its cache: folders resolved, file parsed and compiled per call
        def uncached(name):
            for d in prompt_dirs():
                if (d/f'{name}.yaml').exists(): return prompts.PromptTemplate.from_file(d/f'{name}.yaml')
            raise prompts.DataError(f'no template {name!r}')
        prompts.load_template = uncached
        if hasattr(prompts, '_compiled'): prompts._compiled = uncached     # `render` reads the compiled template without a copy
    inside, generate = [0.], Judge.generate
    def timed(self, *args, **kw):
        t = time.process_time()
        try: return generate(self, *args, **kw)
        finally: inside[0] += time.process_time() - t
    Judge.generate = timed
    cfg = load_rehearsal()
    jfile, env = rehearsal_judges(a.judges)
    (work/'judges.yaml').write_text(yaml.safe_dump(jfile, sort_keys=False))
    proc, url = start_server(tree, a.benchmark, planted_spec(cfg, a.judges), work, 0 if a.config == 'baseline' else 200_000)
    _environment({**{k: v.format(url=url) for k, v in env.items()}, ENV_RUNS: work/'runs', ENV_JUDGES: work/'judges.yaml',
                  ENV_CACHE: work/'cache', ENV_FIGURES: work/'figures', ENV_LABEL: 'rehearsal throughput', ENV_PROGRESS: '0'})
    try:
        load0, s0, c0, t0 = os.getloadavg()[0], _cpu(proc.pid), time.process_time(), time.perf_counter()
        for m in a.methods:
            for j in a.judges: evaluate(m, a.benchmark, j, limit=a.limit)
        wall, ccpu, scpu = time.perf_counter() - t0, time.process_time() - c0, _cpu(proc.pid) - s0
        n = answered(url)
    finally:
        proc.terminate(); proc.wait(10); shutil.rmtree(work, ignore_errors=True)
    ms = lambda x: round(1000*x/n, 3)
    print(json.dumps(dict(config=a.config, requests=n, wall_s=round(wall, 2), requests_per_s=round(n/wall, 1),
                          client_cpu_ms_per_request=ms(ccpu), client_request_path_cpu_ms_per_request=ms(inside[0]),
                          client_other_cpu_ms_per_request=ms(ccpu - inside[0]), server_cpu_ms_per_request=ms(scpu),
                          cpu_ms_per_request=ms(ccpu + scpu), load_before=round(load0, 2), load_after=round(os.getloadavg()[0], 2))))

def measure(config, tree, a, work) -> dict:
    args = [sys.executable, str(HERE/'bench'/'rehearsal_throughput.py'), '--worker', '--config', config, '--tree', str(tree), '--work', str(work),
            '--benchmark', a.benchmark, '--limit', str(a.limit), '--methods', *a.methods, '--judges', *a.judges]
    r = subprocess.run(args, capture_output=True, text=True, cwd=tree, env=_env(tree))
    if r.returncode: raise RuntimeError(f'{config} failed: {r.stderr[-2000:]}')
    return json.loads(r.stdout.strip().splitlines()[-1])

def export_ref(ref, work) -> Path:
    "The tree of git revision `ref`, exported into `work`."
    out = Path(work)/f'ref-{ref}'; out.mkdir()
    tar = subprocess.run(['git', 'archive', '--format=tar', ref], cwd=HERE, capture_output=True, check=True).stdout
    subprocess.run(['tar', '-x', '-C', str(out)], input=tar, check=True)
    return out

def count_requests(sample_items:int=32) -> dict:
    "Requests of the full rehearsal per block (dry runs of each distinct point on `sample_items` items, scaled; judges counted apart from creators)."
    sys.path.insert(0, str(HERE))
    from checkeval.reproduction.rehearsal import load_rehearsal, rehearsal_points
    from checkeval.reproduction.execution import ScaledDryRun, scale_dry_run, dry_run_counts
    from checkeval.judges import FunctionJudge
    from checkeval.runs import evaluate
    from checkeval.data import load_benchmark
    groups, loaded = collections.defaultdict(list), {}
    for p in rehearsal_points(load_rehearsal()):
        if p.is_method_run and p.judge != 'none':
            groups[(p.block, p.benchmark, p.method, json.dumps(p.options, sort_keys=True), tuple(p.dimensions or ()), p.limit)].append(p)
    rows = []
    for (block, bench, method, opts, dims, limit), ps in groups.items():
        items = loaded.setdefault(bench, load_benchmark(bench))
        n = min(limit or len(items), len(items)); k = min(sample_items, n)
        mk = lambda name: ScaledDryRun(FunctionJudge(lambda r: 'yes', name=name, model=name, cache=False))
        dj, others = mk(ps[0].judge), []
        evaluate(method, bench, dj, limit=k, sample='random', items=items, dimensions=ps[0].dimensions, save=False, options=ps[0].options,
                 make_judge=lambda name: others.append(mk(name)) or others[-1])
        j, o = scale_dry_run([dj], n, k), scale_dry_run(others, n, k)
        rows.append(dict(block=block, benchmark=bench, method=method, options=json.loads(opts), judges=len(ps), n_items=n, sampled=k,
                         per_judge=j['requests'], requests=j['requests']*len(ps) + o['requests'], creator_requests=o['requests'],
                         how_exact=dry_run_counts(method)))
    return dict(total=sum(r['requests'] for r in rows), rows=rows)

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--benchmark', default='summeval'); p.add_argument('--limit', type=int, default=64)
    p.add_argument('--methods', nargs='+', default=['checkeval', 'geval'])
    p.add_argument('--judges', nargs='+', default=['llama-3.1-70b', 'mistral-large', 'qwen2.5-72b', 'mistral-small', 'gemma-2-27b', 'qwen2.5-32b'])
    p.add_argument('--repeats', type=int, default=2)
    p.add_argument('--configs', nargs='+', default=['baseline', 'previous', 'current'])
    p.add_argument('--ref', default=DEFAULT_REF, help='git revision of the "previous" configuration')
    p.add_argument('--no-count', dest='count', action='store_false', help='skip counting the full rehearsal (and the projections)')
    p.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--config', help=argparse.SUPPRESS); p.add_argument('--tree', help=argparse.SUPPRESS); p.add_argument('--work', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker: return worker(a)
    sys.path.insert(0, str(HERE))
    from checkeval.settings import ENV_MIRROR, mirror_dir
    if mirror_dir() is not None: os.environ[ENV_MIRROR] = str(mirror_dir())   # the exported tree has no ../shared/data beside it
    runs = []
    with tempfile.TemporaryDirectory(prefix='rthru-bench-') as work:
        trees = {c: export_ref(a.ref, work) if c == 'previous' else HERE for c in a.configs}
        for r in range(a.repeats):
            for c in (a.configs if r % 2 == 0 else a.configs[::-1]):
                runs.append(measure(c, trees[c], a, work)); print(json.dumps(runs[-1]), flush=True)
    keys = ('requests_per_s', 'cpu_ms_per_request', 'client_cpu_ms_per_request', 'client_request_path_cpu_ms_per_request',
            'client_other_cpu_ms_per_request', 'server_cpu_ms_per_request', 'wall_s')
    med = {c: {k: round(statistics.median(x[k] for x in runs if x['config'] == c), 3) for k in keys} for c in a.configs}
    out = dict(bench='rehearsal_throughput', benchmark=a.benchmark, limit=a.limit, methods=a.methods, judges=a.judges, repeats=a.repeats,
               ref=a.ref, requests=runs[0]['requests'], median=med)
    base = 'previous' if 'previous' in med else a.configs[0]
    if 'current' in med:
        out[f'speedup_requests_per_s_vs_{base}'] = round(med['current']['requests_per_s']/med[base]['requests_per_s'], 2)
        out[f'speedup_cpu_per_request_vs_{base}'] = round(med[base]['cpu_ms_per_request']/med['current']['cpu_ms_per_request'], 2)
    if a.count:
        cnt = count_requests(); total = cnt['total']
        out['full_rehearsal'] = dict(requests=total, counted_by='methods dry runs on 32 sampled items per distinct point, scaled; cache hits between blocks not subtracted',
                                     blocks=[{k: r[k] for k in ('block', 'benchmark', 'method', 'judges', 'n_items', 'requests')} for r in cnt['rows']])
        out['PROJECTION_full_rehearsal_minutes'] = {c: dict(at_measured_requests_per_s=round(total/med[c]['requests_per_s']/60, 1),
                                                            if_cpu_bound_on_2_free_cores=round(total*med[c]['cpu_ms_per_request']/1000/2/60, 1),
                                                            if_client_on_1_core=round(total*med[c]['client_cpu_ms_per_request']/1000/60, 1))
                                                    for c in med}
    out.update(load_average=[round(x, 2) for x in os.getloadavg()], runs=runs, cpus=os.cpu_count())
    print(json.dumps(out))

if __name__ == '__main__': main()
