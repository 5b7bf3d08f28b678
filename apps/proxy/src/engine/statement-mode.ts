/** How a statement's answer is framed: a simple Query's own ReadyForQuery, or inside a larger exchange. */
export interface StatementMode {
  readonly extended: boolean;
  /** The statement is the whole simple Query: the backend's ReadyForQuery goes to the client. */
  readonly final: boolean;
}
