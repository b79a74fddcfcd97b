// /favicon.ico for every listener: a 32×32 ICO holding one PNG (a blue tile with a white bar),
// drawn here so no binary file is checked in. Pure.
import { deflateSync } from "node:zlib"

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "latin1")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}

const size = 32
const png = (): Buffer => {
  const rows: Array<Buffer> = []
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4)
    for (let x = 0; x < size; x++) {
      const inside = x >= 2 && x < 30 && y >= 2 && y < 30
      const bar = x >= 9 && x < 23 && ((y >= 8 && y < 12) || (y >= 14 && y < 18) || (y >= 20 && y < 24))
      const [r, g, b, a] = !inside ? [0, 0, 0, 0] : bar ? [255, 255, 255, 255] : [31, 95, 191, 255]
      row.set([r!, g!, b!, a!], 1 + x * 4)
    }
    rows.push(row)
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 6, 0, 0, 0], 8)
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(Buffer.concat(rows))), chunk("IEND", Buffer.alloc(0))])
}

export const faviconIco = (): Buffer => {
  const image = png()
  const header = Buffer.alloc(22)
  header.writeUInt16LE(0, 0)
  header.writeUInt16LE(1, 2)
  header.writeUInt16LE(1, 4)
  header.set([size, size, 0, 0], 6)
  header.writeUInt16LE(1, 10)
  header.writeUInt16LE(32, 12)
  header.writeUInt32LE(image.length, 14)
  header.writeUInt32LE(22, 18)
  return Buffer.concat([header, image])
}
