import { expect } from 'vitest'
import { rawRequest } from './raw-http'

/** The samples of a gateway's Prometheus text exposition on its metrics port: `name{labels}` → value. */
export async function scrape(port: number): Promise<Map<string, number>> {
  const answer = await rawRequest(`http://127.0.0.1:${port}/metrics`)
  expect(answer.status).toBe(200)
  expect(answer.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
  const samples = new Map<string, number>()
  for (const line of answer.body.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    samples.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return samples
}
