export async function statusCommand(_a: string[]): Promise<number> { return 1; }
