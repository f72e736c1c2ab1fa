#!/bin/sh
# The judge `gangpack shrink` runs on each candidate scenario (examples/testing/README.md,
# section 6): the naive scheduler decides, then `gangpack check` judges its decisions.
#
#   gangpack shrink -f scenario.json --judge examples/testing/judge.sh
#   gangpack shrink -f scenario.json --judge 'examples/testing/judge.sh topology-split'
#
# The candidate is $GANGPACK_SCENARIO (JSON); gangpack is $GANGPACK, else the one on
# PATH. The decisions are written beside the candidate ($GANGPACK_SCENARIO.decisions),
# and removed. Exit status: check's (0 valid, 4 a rule is broken, 2 invalid input); with
# a RULE argument, 4 only when that rule is broken (else 0, or 2 for invalid input).
set -u
gangpack=${GANGPACK:-gangpack}
decisions=$GANGPACK_SCENARIO.decisions
# -S: the standard library only, without site-packages (faster to start).
python3 -S "${0%/*}/naive-scheduler.py" "$GANGPACK_SCENARIO" > "$decisions" || exit 1
if [ -z "${1:-}" ]; then
  "$gangpack" check -f "$GANGPACK_SCENARIO" --decisions "$decisions" > /dev/null 2>&1
  status=$?
else
  findings=$("$gangpack" check -f "$GANGPACK_SCENARIO" --decisions "$decisions" -o json 2>/dev/null)
  status=$?
  case $status:$findings in
    4:*"\"rule\": \"$1\""*) ;;
    4:*) status=0 ;;
  esac
fi
rm -f "$decisions"
exit $status
