/** A node of the queue; keep it to remove the entry later in O(1). */
export interface QueueNode<T> {
  readonly value: T;
  prev: QueueNode<T> | null;
  next: QueueNode<T> | null;
  queued: boolean;
}

/**
 * A FIFO as a doubly linked list: push, shift and removal of any node (a waiter whose checkout
 * timed out) are all O(1), so a long queue costs nothing per operation.
 */
export class WaiterQueue<T> {
  private head: QueueNode<T> | null = null;
  private tail: QueueNode<T> | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(value: T): QueueNode<T> {
    const node: QueueNode<T> = { value, prev: this.tail, next: null, queued: true };
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.count++;
    return node;
  }

  shift(): T | undefined {
    const node = this.head;
    if (node === null) return undefined;
    this.remove(node);
    return node.value;
  }

  /** Removes `node` if it is still queued; returns whether it was. */
  remove(node: QueueNode<T>): boolean {
    if (!node.queued) return false;
    node.queued = false;
    if (node.prev === null) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === null) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    this.count--;
    return true;
  }
}
