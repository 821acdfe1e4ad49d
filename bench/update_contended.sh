#!/bin/sh
# One context-mode batch-update (object-trump) while another program changes 1% of the rows.
#   bench/update_contended.sh BATCHRUN STORE ROWS REPORT.json
python3 bench/outside_writer.py "$2" "$3" & writer=$!
"$1" bench/update_contended.yaml --quiet --report "$4"; status=$?
kill $writer 2>/dev/null; wait $writer 2>/dev/null
exit $status
