text = input().strip()
pattern = input().strip()
print(sum(1 for i in range(len(text) - len(pattern) + 1) if text[i:i + len(pattern)] == pattern))
