export * from './report-parser';
export * from './bounce-mx';
