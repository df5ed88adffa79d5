a, b = input().split()
def minutes(t):
    h, m = t.split(':')
    return int(h) * 60 + int(m)
print((minutes(b) - minutes(a)) % 1440)
