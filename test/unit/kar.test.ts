import { InvalidInputError } from '../../shared/errors';
import { karSchedule, nextK } from '../../shared/kar';

describe('karSchedule', () => {
  test('doubles k from 1 and ends with the pool size', () => {
    expect(karSchedule(1)).toEqual([1]);
    expect(karSchedule(2)).toEqual([1, 2]);
    expect(karSchedule(4)).toEqual([1, 2, 4]);
    expect(karSchedule(5)).toEqual([1, 2, 4, 5]);
    expect(karSchedule(12)).toEqual([1, 2, 4, 8, 12]);
  });

  test('is empty for an empty pool', () => {
    expect(karSchedule(0)).toEqual([]);
  });

  test('is 1, 2, 4, … (top-2^s in iteration s) then the pool size, for every pool up to 300', () => {
    for (let poolSize = 1; poolSize <= 300; poolSize++) {
      const schedule = karSchedule(poolSize);
      expect(schedule.at(-1)).toBe(poolSize);
      schedule.slice(0, -1).forEach((k, s) => expect(k).toBe(2 ** s));
      expect(schedule.length).toBe(Math.ceil(Math.log2(poolSize)) + 1);
    }
  });

  test('rejects a negative or fractional pool size', () => {
    expect(() => karSchedule(-1)).toThrow(InvalidInputError);
    expect(() => karSchedule(2.5)).toThrow(InvalidInputError);
  });
});

describe('nextK', () => {
  test('doubles k while the pool has more messages, capped at the pool size', () => {
    expect(nextK(1, 10)).toEqual({ k: 2, exhausted: false });
    expect(nextK(4, 10)).toEqual({ k: 8, exhausted: false });
    expect(nextK(8, 10)).toEqual({ k: 10, exhausted: false });
  });

  test('reports exhausted, keeping k, once k covers the pool', () => {
    expect(nextK(10, 10)).toEqual({ k: 10, exhausted: true });
    expect(nextK(16, 10)).toEqual({ k: 16, exhausted: true });
    expect(nextK(1, 1)).toEqual({ k: 1, exhausted: true });
    expect(nextK(0, 0)).toEqual({ k: 0, exhausted: true });
  });

  test('followed from k = 1 until exhausted, visits exactly the schedule', () => {
    for (let poolSize = 1; poolSize <= 300; poolSize++) {
      // Arrange
      const visited = [1];
      // Act
      for (let step = nextK(1, poolSize); !step.exhausted; step = nextK(step.k, poolSize)) visited.push(step.k);
      // Assert
      expect(visited).toEqual(karSchedule(poolSize));
    }
  });

  test('rejects k below 1 for a non-empty pool and invalid numbers', () => {
    expect(() => nextK(0, 5)).toThrow(InvalidInputError);
    expect(() => nextK(1.5, 5)).toThrow(InvalidInputError);
    expect(() => nextK(1, -1)).toThrow(InvalidInputError);
  });
});
