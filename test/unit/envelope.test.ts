import { describe, expect, it } from 'vitest'
import { checkEnvelope, IAM_REFUSED_MESSAGE } from '../../server/core/envelope'

describe('checkEnvelope', () => {
  it.each([
    [{ code: 'API000', message: 'OK', body: {} }, { ok: true }],
    [{ body: {} }, { ok: true }],
    [undefined, { ok: true }],
    ['<html>', { ok: true }],
    [{ code: 'AUTH001', message: 'Sai mật khẩu' }, { ok: false, message: 'Sai mật khẩu' }],
    [{ code: null, message: 'Lỗi' }, { ok: false, message: 'Lỗi' }],
    [{ code: 'X', message: '' }, { ok: false, message: IAM_REFUSED_MESSAGE }],
    [{ code: 'X' }, { ok: false, message: IAM_REFUSED_MESSAGE }],
  ])('%j', (response, expected) => {
    expect(checkEnvelope(response)).toEqual(expected)
  })
})
