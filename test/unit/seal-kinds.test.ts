import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { deriveSealKeys, sealValue, sessionKind, unsealSession, unsealValue, type SealKind, type SessionPayload } from '../../server/core/session/seal'
import { SessionCache } from '../../server/core/session/session-cache'

const SECRET = 'k'.repeat(32)
const now = Date.now()
const user = { id: 'u1', name: 'Nguyễn A', email: 'a@x.vn', roles: ['admin'], permissions: ['/orders/search'] }
/** Shaped like a session and like a token record at once: only the kind can tell them apart. */
const both = { user, sid: 'AAAAAAAAAAAAAAAA', iat: now, accessToken: 'at-1', expiresAt: now + 60_000, sub: 's', userId: 'u1', obtainedAt: now, generation: 0 }
const KINDS: SealKind[] = ['session', 'session-mock', 'session-oidc', 'oidc-trip', 'oidc-tokens', 'oidc-logout']
const SESSION_KINDS = new Set<SealKind>(['session', 'session-mock', 'session-oidc'])
const keysOf = (kind: SealKind) => deriveSealKeys([SECRET], kind)

/** A text sealed as the gateway sealed every kind before kinds had labels: the mode's session key, no additional data. */
function sealedWithoutLabel(value: unknown, info: string): string {
  const key = Buffer.from(hkdfSync('sha256', SECRET, 'svc-auth-gateway', info, 32))
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
  return ['v1', iv, ciphertext, cipher.getAuthTag()].map(part => typeof part === 'string' ? part : part.toString('base64url')).join('.')
}

describe('sealed kinds: each opens as itself only', () => {
  const pairs = KINDS.flatMap(sealedAs => KINDS.map(openedAs => [sealedAs, openedAs] as const))

  it.each(pairs)('sealed as %s, opened as %s', (sealedAs, openedAs) => {
    const sealed = sealValue(both, keysOf(sealedAs))
    const opened = unsealValue(sealed, keysOf(openedAs))
    if (sealedAs === openedAs) {
      expect(opened).toEqual(both)
      if (SESSION_KINDS.has(openedAs)) expect(unsealSession(sealed, keysOf(openedAs), now)).toEqual(both)
      return
    }
    expect(opened).toBeNull()
    if (SESSION_KINDS.has(openedAs)) {
      expect(unsealSession(sealed, keysOf(openedAs), now)).toBeNull()
      expect(new SessionCache(keysOf(openedAs)).open(sealed, now)).toBeNull()
    }
  })

  it('gives each kind its own key and its own label', () => {
    const keys = KINDS.map(keysOf)
    expect(new Set(keys.map(k => k.keys[0]!.toString('hex'))).size).toBe(KINDS.length)
    expect(new Set(keys.map(k => k.label.toString())).size).toBe(KINDS.length)
  })

  it('binds the label in: the right key with another label opens nothing', () => {
    const tokens = keysOf('oidc-tokens')
    const relabelled = { ...tokens, label: keysOf('session-oidc').label }
    expect(unsealValue(sealValue(both, tokens), relabelled)).toBeNull()
    expect(unsealValue(sealValue(both, relabelled), tokens)).toBeNull()
  })

  it('chooses the session kind of the mode', () => {
    expect(sessionKind(false)).toBe('session')
    expect(sessionKind(false, 'iam')).toBe('session')
    expect(sessionKind(true)).toBe('session-mock')
    expect(sessionKind(true, 'oidc')).toBe('session-mock')
    expect(sessionKind(false, 'oidc')).toBe('session-oidc')
  })
})

describe('seals made before kinds had labels', () => {
  const session: SessionPayload = { user, sid: 'AAAAAAAAAAAAAAAA', iat: now, accessToken: 'at-1' }

  it('keep a contract-IAM or mock session (their keys never sealed anything else) for the rest of its 8 hours', () => {
    expect(unsealSession(sealedWithoutLabel(session, 'svc_session v1'), keysOf('session'), now)).toEqual(session)
    expect(unsealSession(sealedWithoutLabel(session, 'svc_session v1 mock'), keysOf('session-mock'), now)).toEqual(session)
    expect(unsealSession(sealedWithoutLabel(session, 'svc_session v1'), keysOf('session-mock'), now)).toBeNull()
  })

  it('open as nothing with an OpenID gateway, whose session key also sealed its token records and trips', () => {
    // The hole this closes: a token record read out of Redis, pasted as svc_session.
    const record = sealedWithoutLabel(both, 'svc_session v1 oidc')
    expect(unsealSession(record, keysOf('session-oidc'), now)).toBeNull()
    expect(unsealValue(record, keysOf('oidc-tokens'))).toBeNull()
    expect(unsealValue(sealedWithoutLabel([{ kind: 'oidc-login' }], 'svc_session v1 oidc'), keysOf('oidc-trip'))).toBeNull()
  })
})
