k = int(input()) % 26
s = input()
out = []
for c in s:
    if 'a' <= c <= 'z':
        out.append(chr((ord(c) - 97 + k) % 26 + 97))
    elif 'A' <= c <= 'Z':
        out.append(chr((ord(c) - 65 + k) % 26 + 65))
    else:
        out.append(c)
print(''.join(out))
