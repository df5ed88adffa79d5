# Tandem code-environment harness: runs each case in a subprocess, prints one JSON report.
import hashlib, json, os, re, signal, subprocess, sys, tempfile, time

# The spec: buildHarness (harness.ts) puts a string literal of its JSON in place of the placeholder
# below. It holds the programs, the cases (input, SHA-256 and size of the expected output) and the limits.
SPEC = json.loads('__SPEC__')
TAG = 'tandem-code/1'
EXCERPT = SPEC['excerpt']
CAP = SPEC['cap']


def private():
    # Not dumpable: programs of the same user can no longer open /proc/<harness>/fd or mem.
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def text(data):
    return data.decode('utf-8', 'replace')


def digest(out):
    tokens = [t for t in re.split(r'[ \t\n\r\f\v]+', text(out)) if t]
    return hashlib.sha256(' '.join(tokens).encode('utf-8', 'replace')).hexdigest()


def remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def run_case(case, work, timeout):
    prog = os.path.join(work, 'prog.py')
    out_path = os.path.join(work, 'stdout')
    err_path = os.path.join(work, 'stderr')
    started = time.monotonic()
    timed_out = False
    code = None
    try:
        with open(prog, 'w', encoding='utf-8', errors='replace') as f:
            f.write(SPEC['programs'][case['program']])
        with open(out_path, 'wb') as out, open(err_path, 'wb') as err:
            proc = subprocess.Popen([sys.executable or 'python3', '-I', prog], cwd=work, stdin=subprocess.PIPE,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                proc.communicate(case['input'].encode('utf-8', 'replace'), timeout=timeout)
                code = proc.returncode
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
        seconds = round(time.monotonic() - started, 3)
        cap = max(CAP, 2 * case['size'] + 1024)
        with open(out_path, 'rb') as f:
            out = f.read(cap + 1)
        with open(err_path, 'rb') as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4 * EXCERPT))
            err = text(f.read())
    finally:
        for path in (prog, out_path, err_path):
            remove(path)
    if timed_out:
        status = 'timeout'
    elif len(out) > cap:
        status = 'oversize'
    elif code != 0:
        status = 'error'
    elif digest(out) == case['sha']:
        status = 'pass'
    else:
        status = 'wrong'
    excerpt = ('exit %s: %s' % (code, err[-EXCERPT:])) if status == 'error' else text(out[:4 * EXCERPT])[:EXCERPT]
    return {'id': case['id'], 'status': status, 'seconds': seconds, 'excerpt': excerpt}


def main():
    start = time.monotonic()
    private()
    work = tempfile.mkdtemp(prefix='cases-', dir=os.getcwd())
    results = []
    for case in SPEC['cases']:
        left = SPEC['budget'] - (time.monotonic() - start)
        if left < 0.05:
            results.append({'id': case['id'], 'status': 'skipped', 'seconds': 0, 'excerpt': ''})
            continue
        try:
            results.append(run_case(case, work, min(SPEC['timeout'], left)))
        except Exception as e:
            results.append({'id': case['id'], 'status': 'error', 'seconds': 0,
                            'excerpt': ('harness: %s: %s' % (type(e).__name__, e))[:EXCERPT]})
    return results


try:
    report = {'harness': TAG, 'cases': main()}
except BaseException as e:
    report = {'harness': TAG, 'error': ('%s: %s' % (type(e).__name__, e))[:EXCERPT]}
sys.stdout.write(json.dumps(report) + '\n')
