/**
 * The in-memory message store (shared/memory-message-store.ts) through the message store
 * conformance suite (test/support/message-store-conformance.ts), the same tests the DynamoDB store
 * passes against dynalite.
 */
import { InMemoryMessageStore } from '../../shared/memory-message-store';
import { describeMessageStoreConformance } from '../support/message-store-conformance';

describe('InMemoryMessageStore', () => {
  const store = new InMemoryMessageStore();
  describeMessageStoreConformance(() => store);
});
