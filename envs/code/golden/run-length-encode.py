from itertools import groupby
s = input().strip()
print(''.join(ch + str(len(list(run))) for ch, run in groupby(s)))
