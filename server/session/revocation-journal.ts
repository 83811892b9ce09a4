import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { journalText, parseJournal, type Revocation } from '../core/session/revocations'
import { useLogger } from '../ops/logger'

/**
 * The revocations journal (APP_REVOCATION_JOURNAL): a file on a volume where an instance that stops keeps the
 * revocations Redis never took, read at its next start (session/revocations.ts). Its format is core/session/revocations.ts's.
 */

/** The revocations a previous run left in the journal, or undefined when there is none (or it cannot be read: said). */
export function readJournal(path: string): Revocation[] | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  }
  catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') useLogger().error({ journal: path, error: (error as Error).message }, 'không đọc được nhật ký thu hồi phiên.')
    return undefined
  }
  const revocations = parseJournal(text)
  useLogger().warn({ journal: path, count: revocations.length }, `đọc ${revocations.length} thu hồi phiên chưa gửi Redis từ nhật ký.`)
  return revocations
}

/** Writes the journal whole (through a temporary file: a crash never leaves half of it); false when it cannot (said). */
export function writeJournal(path: string, revocations: readonly Revocation[]): boolean {
  try {
    writeFileSync(`${path}.tmp`, journalText(revocations), { mode: 0o600 })
    renameSync(`${path}.tmp`, path)
    return true
  }
  catch (error) {
    useLogger().error({ journal: path, error: (error as Error).message }, 'không ghi được nhật ký thu hồi phiên.')
    return false
  }
}

/** Removes the journal once Redis holds everything in it. */
export function removeJournal(path: string): void {
  try {
    rmSync(path, { force: true })
    useLogger().info({ journal: path }, 'Redis đã nhận mọi thu hồi phiên của nhật ký: xoá nhật ký.')
  }
  catch (error) {
    // Harmless: its revocations are in Redis, and reading them again at the next start adds nothing.
    useLogger().warn({ journal: path, error: (error as Error).message }, 'không xoá được nhật ký thu hồi phiên.')
  }
}
