import { describe, expect, it } from 'vitest'
import { checkEnvelope, cleanIamMessage } from '../../server/core/iam/envelope'

const REFUSED = 'IAM từ chối yêu cầu.'

describe('checkEnvelope', () => {
  it.each([
    [{ code: 'API000', message: 'OK', body: {} }, { ok: true }],
    [{ body: {} }, { ok: true }],
    [undefined, { ok: true }],
    ['<html>', { ok: true }],
    [{ code: 'AUTH001', message: 'Sai mật khẩu' }, { ok: false, message: 'Sai mật khẩu' }],
    [{ code: null, message: 'Lỗi' }, { ok: false, message: 'Lỗi' }],
    [{ code: 'X', message: '' }, { ok: false, message: REFUSED }],
    [{ code: 'X', message: '\u0000\r\n' }, { ok: false, message: REFUSED }],
    [{ code: 'X' }, { ok: false, message: REFUSED }],
    [{ code: 'X', message: 42 }, { ok: false, message: REFUSED }],
    // Codes that only start like (or contain) the success code are refusals.
    [{ code: 'API001', message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
    [{ code: 'API0000', message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
    [{ code: 'API00', message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
    [{ code: ' API000', message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
    [{ code: 'api000', message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
    [{ code: 0, message: 'Gần đúng' }, { ok: false, message: 'Gần đúng' }],
  ])('%j', (response, expected) => {
    expect(checkEnvelope(response)).toEqual(expected)
  })
})

describe('cleanIamMessage', () => {
  it.each([
    ['Sai mật khẩu.', 'Sai mật khẩu.'],
    ['Sai\r\nmật\tkhẩu', 'Sai mật khẩu'],
    ['a\u0000b\u001Bc\u007Fd\u0085e', 'a b c d e'],
    ['\u202Egnp.exe\u202C ok', 'gnp.exe ok'],
    ['  nhiều    khoảng   trắng  ', 'nhiều khoảng trắng'],
  ])('%j -> %j', (input, expected) => {
    expect(cleanIamMessage(input)).toBe(expected)
  })

  it('keeps at most 300 characters, never cutting a character in two', () => {
    expect(Array.from(cleanIamMessage('ệ'.repeat(1_000)))).toHaveLength(300)
    expect(cleanIamMessage('😀'.repeat(400))).toBe('😀'.repeat(300))
    expect(cleanIamMessage('x'.repeat(900_000))).toBe('x'.repeat(300))
  })
})
