// The end of a long text appended piece by piece, in memory of a fixed size: its characters are copied
// into one ring of UTF-16 code units, so no piece is kept alive (a kept string per output line, joined and
// cut now and then, lived long enough to fill the old generation with garbage).

const FIRST_UNITS = 4096;

/** The last `capacity` UTF-16 code units of everything appended (shorter when less was, or after `keep`). */
export class TextTail {
  private ring: Buffer | null = null;
  /** Where the next code unit goes, in code units. */
  private head = 0;
  private size = 0;

  constructor(private readonly capacity: number) {}

  /** How many code units the tail holds. */
  get length(): number {
    return this.size;
  }

  /** Adds `text` at the end, forgetting what falls out of the capacity. */
  append(text: string): void {
    if (text.length === 0) return;
    const piece = text.length > this.capacity ? text.slice(-this.capacity) : text;
    const ring = this.room(this.size + piece.length);
    const units = ring.length / 2;
    const first = Math.min(piece.length, units - this.head);
    ring.write(piece, this.head * 2, first * 2, "utf16le");
    if (first < piece.length) ring.write(piece.slice(first), 0, (piece.length - first) * 2, "utf16le");
    this.head = (this.head + piece.length) % units;
    this.size = Math.min(this.capacity, this.size + piece.length);
  }

  /** Keeps only the last `units` code units. */
  keep(units: number): void {
    this.size = Math.max(0, Math.min(this.size, units));
  }

  /** Forgets everything. */
  clear(): void {
    this.size = 0;
  }

  /** The tail as a string. */
  text(): string {
    if (!this.ring || this.size === 0) return "";
    const units = this.ring.length / 2;
    if (this.size <= this.head) return this.ring.toString("utf16le", (this.head - this.size) * 2, this.head * 2);
    return (
      this.ring.toString("utf16le", (units - (this.size - this.head)) * 2, units * 2) +
      this.ring.toString("utf16le", 0, this.head * 2)
    );
  }

  /** The ring, grown (by doubling, up to the capacity) to hold `wanted` code units; most texts stay small. */
  private room(wanted: number): Buffer {
    const units = this.ring ? this.ring.length / 2 : 0;
    if (this.ring && (units >= wanted || units === this.capacity)) return this.ring;
    let grown = Math.max(FIRST_UNITS, units);
    while (grown < wanted && grown < this.capacity) grown *= 2;
    const ring = Buffer.alloc(Math.min(grown, this.capacity) * 2);
    // The text so far moves to the start of the new ring, in order.
    const kept = this.text();
    ring.write(kept, 0, kept.length * 2, "utf16le");
    this.ring = ring;
    this.head = kept.length;
    return ring;
  }
}
