#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The word frequencies of examples/wordfreq/wordfreq.dot, with coreutils:
# words of ASCII letters, lower case, "word<TAB>count", by count
# (descending), then by word. Usage: reference.sh < corpus > reference
export LC_ALL=C
tr -cs 'A-Za-z' '\n' | tr 'A-Z' 'a-z' | grep -v '^$' | sort | uniq -c |
	awk '{ print $2 "\t" $1 }' | sort -t '	' -k2,2nr -k1,1
