/** Email addresses: how Salvo normalises them and which it accepts (leads, events, recipients of every send). */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email);
}

const ADDRESS = /^[^\s<>()[\],;:"@\\]+@[^\s<>()[\],;:"@\\]+$/;

export function isAddress(email: string): boolean {
  return ADDRESS.test(email);
}
