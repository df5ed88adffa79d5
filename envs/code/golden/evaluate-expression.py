import re
tokens = re.findall(r'\d+|[-+*()]', input())
pos = 0
def peek():
    return tokens[pos] if pos < len(tokens) else None
def take():
    global pos
    pos += 1
    return tokens[pos - 1]
def expr():
    value = term()
    while peek() in ('+', '-'):
        op = take()
        rhs = term()
        value = value + rhs if op == '+' else value - rhs
    return value
def term():
    value = factor()
    while peek() == '*':
        take()
        value *= factor()
    return value
def factor():
    tok = take()
    if tok == '(':
        value = expr()
        take()
        return value
    return int(tok)
print(expr())
