#!/bin/bash
# usage: cap.sh TREE SLUG FILE OUTPREFIX
TREE=$1; SLUG=$2; FILE=$3; OUT=$4
export PYTHONPATH=$TREE GRIND_STATE_DIR=$(mktemp -d) COLUMNS=80
cd /tmp/verdict
/work/main/.venv/bin/python -m judge run $SLUG --file $FILE --no-daemon > $OUT.plain.raw 2>&1
{ echo "\$ COLUMNS=80 grind run $SLUG --file $(basename $FILE) | cat   (plain; $(wc -l < $OUT.plain.raw) lines, $(wc -c < $OUT.plain.raw) bytes; $(fold -w 80 $OUT.plain.raw | wc -l) rows at 80 columns; first 30 rows)"; fold -w 80 $OUT.plain.raw | head -30; } > $OUT-plain.txt
S=cap$$
tmux new-session -d -s $S -x 80 -y 24 "env PYTHONPATH=$TREE GRIND_STATE_DIR=$(mktemp -d) TERM=xterm-256color /work/main/.venv/bin/python -m judge run $SLUG --file $FILE --no-daemon; sleep 30"
for i in $(seq 60); do sleep 1; tmux capture-pane -p -t $S | grep -q "Stuck\|hint" && break; done
sleep 1
ROWS=$(tmux capture-pane -p -S - -t $S | sed -e :a -e "/^\n*\$/{\$d;N;ba" -e "}" | wc -l)
{ echo "\$ grind run $SLUG --file $(basename $FILE)   (styled, tmux 80x24, $ROWS rows in all: the last screen the learner sees)"; tmux capture-pane -p -t $S; } > $OUT-styled.txt
tmux kill-session -t $S
