/**
 * Commands flagged for confirmation and not yet confirmed, for one server process.
 * Matching is byte-for-byte: no trimming, no case folding. A confirmation is used once.
 */
export class PendingConfirmations {
  private pending = new Set<string>();

  request(command: string): void {
    this.pending.add(command);
  }

  /** True if the command was flagged; the record is consumed. */
  consume(command: string): boolean {
    return this.pending.delete(command);
  }
}
