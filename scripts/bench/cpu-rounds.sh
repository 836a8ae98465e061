#!/usr/bin/env bash
# Rounds of CPU per request (issue #45 item 7): in each round and scenario, the baseline, the
# service as it is here and the service of another checkout (OLD, e.g. a worktree at an earlier
# commit), order alternated between rounds, then the baseline again. Each target gets a database
# of its own on the PostgreSQL server at PGHOST (default 127.0.0.1). Prints one line per run and a
# table of medians (ratio = service ms / mean of the round's two baseline runs).
#
#   scripts/bench/cpu-rounds.sh /path/to/old-checkout [rounds] [scenarios...]
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=${1:?"usage: cpu-rounds.sh OLD_CHECKOUT [rounds] [scenario...]"}
ROUNDS=${2:-3}
FIRST=${CPU_ROUNDS_FIRST:-1}  # the first round's number (its parity decides the order)
shift $(( $# >= 2 ? 2 : 1 ))
SCENARIOS=${*:-create detail status public-status}
NODE=$PWD/node_modules/.bin/node
PG=${PGHOST:-127.0.0.1}
OUT=${CPU_ROUNDS_OUT:-/tmp/cpu-rounds.txt}
[ -n "${CPU_ROUNDS_APPEND:-}" ] || : > "$OUT"

fresh_db() { dropdb -h "$PG" -U postgres --if-exists "$1" >/dev/null 2>&1; createdb -h "$PG" -U postgres "$1"; }
one() { # label dir target scenario
  local db="${CPU_ROUNDS_DB_PREFIX:-cpu_rounds}_$1"  # CPU_ROUNDS_DB_PREFIX: a prefix of its own when two checkouts bench at once
  fresh_db "$db"
  local ms
  ms=$(cd "$2" && DATABASE_URL="postgres://postgres@$PG:5432/$db" "$NODE" --experimental-strip-types --disable-warning=ExperimentalWarning \
    scripts/bench/cpu-share.ts "$3" "$4" 2>/dev/null | sed -n 's/.*CPU per request: \([0-9.]*\) ms (\([0-9]*\) requests).*/\1 \2/p' || true)
  echo "$4 $1 ${ms:-failed}" | tee -a "$OUT"
}
for round in $(seq "$FIRST" $(( FIRST + ROUNDS - 1 ))); do
  for scenario in $SCENARIOS; do
    one baseline "$PWD" baseline "$scenario"
    if (( round % 2 )); then one now "$PWD" service "$scenario"; one old "$OLD" service "$scenario"
    else one old "$OLD" service "$scenario"; one now "$PWD" service "$scenario"; fi
    one baseline2 "$PWD" baseline "$scenario"
    echo "round $round $scenario done" >> "$OUT.progress"
  done
done
"$NODE" -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => l.split(" "))
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }
for (const scenario of [...new Set(lines.map((l) => l[0]))]) {
  const runs = lines.filter((l) => l[0] === scenario && l[2] !== "failed")
  const rounds = []; let current = {}
  for (const [, label, ms] of runs) { current[label] = Number(ms); if (label === "baseline2") { rounds.push(current); current = {} } }
  const base = (r) => ((r.baseline ?? r.baseline2) + (r.baseline2 ?? r.baseline)) / 2
  const now = rounds.map((r) => r.now / base(r)), old = rounds.map((r) => r.old / base(r))
  const f = (xs) => xs.map((x) => x.toFixed(2)).join(", ")
  console.log(`${scenario}: baseline ms ${f(rounds.map(base))}; now ms ${f(rounds.map((r) => r.now))}; old ms ${f(rounds.map((r) => r.old))}; ratio now ${f(now)} (median ${median(now).toFixed(2)}x); ratio old ${f(old)} (median ${median(old).toFixed(2)}x); now/old ${(median(now) / median(old)).toFixed(2)}`)
}' "$OUT"
