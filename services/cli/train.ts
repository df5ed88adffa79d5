export async function trainCommand(_a: string[]): Promise<number> { return 1; }
