import re
s = input().strip()
print(''.join(ch * int(n) for ch, n in re.findall(r'([a-z])(\d+)', s)))
