#!/bin/sh
# Keeps a line per file the agent wrote (the hook's input is the event as JSON).
cat >> .greeter-writes.log
echo >> .greeter-writes.log
